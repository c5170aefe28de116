import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../config.js';
import { documentClient } from './dynamo-client.js';

// The first and the last `dt` partition each domain has events in, kept in the counters table (one item per
// domain, `days#<domain>`, never expiring). Every writer widens it before it publishes files, so the days of any
// readable file lie inside it: all-time reads (a visitor's stats and activity, the first-event lookup, the
// first-purchase check) are bounded by it instead of projecting every day since the stack's start date. A crash
// between the widening and the publishing leaves the days wider than the files: harmless.

export interface DomainDays {
  firstDay: string;
  lastDay: string;
}

const key = (domain: string) => ({ pk: `days#${domain}` });

/** Widens the domain's days to include `firstDay`..`lastDay` (YYYY-MM-DD); concurrent writers only ever widen. */
export async function widenDomainDays(domain: string, firstDay: string, lastDay: string): Promise<void> {
  const widen = async (attribute: 'first_day' | 'last_day', day: string, beyond: '<' | '>') => {
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableNames().counters,
          Key: key(domain),
          UpdateExpression: 'SET #d = :day',
          // ISO dates order as text.
          ConditionExpression: `attribute_not_exists(#d) OR :day ${beyond} #d`,
          ExpressionAttributeNames: { '#d': attribute },
          ExpressionAttributeValues: { ':day': day },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  };
  await widen('first_day', firstDay, '<');
  await widen('last_day', lastDay, '>');
}

/** The domain's days, or undefined when no writer recorded any (no events, or files written before the record existed). */
export async function readDomainDays(domain: string): Promise<DomainDays | undefined> {
  const { Item } = await documentClient().send(
    new GetCommand({ TableName: tableNames().counters, Key: key(domain), ConsistentRead: true }),
  );
  return typeof Item?.first_day === 'string' && typeof Item.last_day === 'string'
    ? { firstDay: Item.first_day, lastDay: Item.last_day }
    : undefined;
}

/** The days per domain of partition files named `domain=<d>/dt=<day>/...`. */
export function daysOfFiles(files: readonly string[]): Map<string, DomainDays> {
  const days = new Map<string, DomainDays>();
  for (const file of files) {
    const match = /^domain=([^/]+)\/dt=(\d{4}-\d{2}-\d{2})\//.exec(file);
    if (!match) throw new Error(`not a partition file: ${file}`);
    const [, domain, day] = match as unknown as [string, string, string];
    const seen = days.get(domain);
    days.set(
      domain,
      seen
        ? { firstDay: day < seen.firstDay ? day : seen.firstDay, lastDay: day > seen.lastDay ? day : seen.lastDay }
        : { firstDay: day, lastDay: day },
    );
  }
  return days;
}
