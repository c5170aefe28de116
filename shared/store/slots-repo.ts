import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../config.js';
import { conditionalUpdate, documentClient, updateIf } from './dynamo-client.js';

// Slots: at most `limit` holders at once of work the whole stack shares a quota of (Athena's active queries, which
// the account counts across every function). One item of the counters table (`slots#<name>`) keeps the holders in
// a map, holder id → the time its hold ends. Taking a slot is one conditional write (`size(holders) < limit`), so
// no two takers can both take the last one; a holder that dies leaves an entry that stops counting at its end and
// is removed by the next taker that finds the slots full. The item stays small: at most `limit` entries of a few
// dozen bytes (and the ones expired since the last sweep).

const key = (name: string) => ({ pk: `slots#${name}` });

/**
 * Takes one of `limit` slots for `holder` until `now + ms` (longer than the work may run): the number of holds
 * with it (this one included, holds ended but not yet swept too), or 0 when all are held. A full set with expired
 * holds is swept once, then tried again.
 */
export async function takeSlot(
  name: string,
  holder: string,
  limit: number,
  ms: number,
  now = Date.now(),
): Promise<number> {
  const held = await tryTake(name, holder, limit, now + ms);
  if (held > 0) return held;
  if ((await sweepExpired(name, now)) === 0) return 0;
  return tryTake(name, holder, limit, now + ms);
}

/** Gives the slot back (nothing when it was swept meanwhile). */
export async function releaseSlot(name: string, holder: string): Promise<void> {
  await updateIf(
    new UpdateCommand({
      TableName: tableNames().counters,
      Key: key(name),
      UpdateExpression: 'REMOVE holders.#holder',
      ConditionExpression: 'attribute_exists(holders)',
      ExpressionAttributeNames: { '#holder': holder },
    }),
  );
}

async function tryTake(name: string, holder: string, limit: number, until: number): Promise<number> {
  // The first holder creates the map; later ones add to it while it has room. The write returns the map it left.
  const held = async (command: UpdateCommand) => {
    const out = await conditionalUpdate(command);
    // Taken: at least this holder, whatever the reply says.
    return out ? Math.max(1, Object.keys((out.Attributes?.holders ?? {}) as Record<string, number>).length) : 0;
  };
  const added = await held(
    new UpdateCommand({
      TableName: tableNames().counters,
      Key: key(name),
      UpdateExpression: 'SET holders.#holder = :until',
      ConditionExpression: 'attribute_exists(holders) AND size(holders) < :limit',
      ExpressionAttributeNames: { '#holder': holder },
      ExpressionAttributeValues: { ':until': until, ':limit': limit },
      ReturnValues: 'ALL_NEW',
    }),
  );
  if (added > 0) return added;
  return held(
    new UpdateCommand({
      TableName: tableNames().counters,
      Key: key(name),
      UpdateExpression: 'SET holders = :holders',
      ConditionExpression: 'attribute_not_exists(holders)',
      ExpressionAttributeValues: { ':holders': { [holder]: until } },
      ReturnValues: 'ALL_NEW',
    }),
  );
}

/** Removes the holds that ended before `now` (each only if still the same hold); returns how many. */
async function sweepExpired(name: string, now: number): Promise<number> {
  const { Item } = await documentClient().send(
    new GetCommand({ TableName: tableNames().counters, Key: key(name), ConsistentRead: true }),
  );
  const expired = Object.entries((Item?.holders ?? {}) as Record<string, number>).filter(([, until]) => until < now);
  let removed = 0;
  for (const [holder, until] of expired) {
    const gone = await updateIf(
      new UpdateCommand({
        TableName: tableNames().counters,
        Key: key(name),
        UpdateExpression: 'REMOVE holders.#holder',
        ConditionExpression: 'holders.#holder = :until',
        ExpressionAttributeNames: { '#holder': holder },
        ExpressionAttributeValues: { ':until': until },
      }),
    );
    if (gone) removed += 1;
  }
  return removed;
}
