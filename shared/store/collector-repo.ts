import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../config.js';
import { documentClient } from './dynamo-client.js';

// The collector's items in the counters table, which no query reads (docs/COLLECTING.md, "Privacy"):
//   - `salt#<UTC day>`: the day's random salt of the visitor hashes, created by the first event of the day;
//   - `visit#<domain>#<visitor hash>`: a visitor's current session, its last event and its attribution;
//   - `site#<domain>`: the site is served (a key was made for it), so its events are accepted.
// Every item but the sites expires by TTL. Every call is one GetItem or one UpdateItem, as the functions are granted.

/** Returns the day's salt, making it if this is the day's first call: one UpdateItem, the same for racing callers. */
export async function saltOfDay(day: string, candidate: string, expiresAt: number): Promise<string> {
  const { Attributes } = await documentClient().send(
    new UpdateCommand({
      TableName: tableNames().counters,
      Key: { pk: `salt#${day}` },
      UpdateExpression: 'SET salt = if_not_exists(salt, :salt), expires_at = if_not_exists(expires_at, :exp)',
      ExpressionAttributeValues: { ':salt': candidate, ':exp': expiresAt },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return String(Attributes!.salt);
}

export interface StoredSession {
  sessionId: string;
  attribution: Record<string, string>;
}

const ATTRIBUTION_PREFIX = 'a_';

/**
 * The session of `visitorKey` at `nowMs`: the current one, extended, when its last event is at most `idleMs` old;
 * else a new one with `fresh`'s id and attribution. One conditional UpdateItem for an event that continues a session,
 * two for one that starts it, more only while other events of the visitor keep changing the item in between (three
 * rounds at most): DynamoDB serialises writes to the item, so racing events of one visitor agree on one session.
 */
export async function touchSession(
  visitorKey: string,
  nowMs: number,
  idleMs: number,
  fresh: StoredSession,
): Promise<StoredSession> {
  const key = { pk: `visit#${visitorKey}` };
  const expiresAt = Math.ceil((nowMs + idleMs) / 1000) + 3600;
  const extend = async (): Promise<StoredSession | null> => {
    try {
      const { Attributes } = await documentClient().send(
        new UpdateCommand({
          TableName: tableNames().counters,
          Key: key,
          UpdateExpression: 'SET last_at = :now, expires_at = :exp',
          ConditionExpression: 'last_at >= :cutoff',
          ExpressionAttributeValues: { ':now': nowMs, ':exp': expiresAt, ':cutoff': nowMs - idleMs },
          ReturnValues: 'ALL_NEW',
        }),
      );
      const attribution: Record<string, string> = {};
      for (const [name, value] of Object.entries(Attributes ?? {}))
        if (name.startsWith(ATTRIBUTION_PREFIX)) attribution[name.slice(ATTRIBUTION_PREFIX.length)] = String(value);
      return { sessionId: String(Attributes!.session_id), attribution };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return null;
      throw error;
    }
  };
  const start = async (): Promise<boolean> => {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {
      ':id': fresh.sessionId,
      ':now': nowMs,
      ':exp': expiresAt,
      ':cutoff': nowMs - idleMs,
    };
    const sets = ['session_id = :id', 'last_at = :now', 'expires_at = :exp'];
    const removes: string[] = [];
    for (const [i, field] of ATTRIBUTION_FIELDS.entries()) {
      names[`#a${i}`] = `${ATTRIBUTION_PREFIX}${field}`;
      const value = fresh.attribution[field];
      if (value === undefined) removes.push(`#a${i}`);
      else {
        sets.push(`#a${i} = :a${i}`);
        values[`:a${i}`] = value;
      }
    }
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableNames().counters,
          Key: key,
          UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ConditionExpression: 'attribute_not_exists(last_at) OR last_at < :cutoff',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    const current = await extend();
    if (current) return current;
    if (await start()) return fresh;
  }
  throw new Error(`the session of a visitor changed three times while one event was recorded`);
}

/** The attribution fields a session keeps (enrichment.ts, Attribution). */
export const ATTRIBUTION_FIELDS = ['referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term'];

/** Records that `domain` is served: its events are accepted from now on. */
export async function markSiteServed(domain: string, now = new Date()): Promise<void> {
  await documentClient().send(
    new UpdateCommand({
      TableName: tableNames().counters,
      Key: { pk: `site#${domain}` },
      UpdateExpression: 'SET served_since = if_not_exists(served_since, :now)',
      ExpressionAttributeValues: { ':now': now.toISOString() },
    }),
  );
}

/** Whether events of `domain` are accepted: a key was made for it, or the store already holds its events. */
export async function isSiteServed(domain: string): Promise<boolean> {
  const get = (pk: string) =>
    documentClient().send(
      new GetCommand({ TableName: tableNames().counters, Key: { pk }, ProjectionExpression: 'pk' }),
    );
  const [site, days] = await Promise.all([get(`site#${domain}`), get(`days#${domain}`)]);
  return site.Item !== undefined || days.Item !== undefined;
}
