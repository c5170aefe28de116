import { BatchWriteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DYNAMODB_BATCH_WRITE_MAX_ITEMS } from '../../shared/aws/service-limits.js';
import { tableNames } from '../../shared/config.js';
import { logger } from '../../shared/log.js';
import { documentClient } from '../../shared/store/dynamo-client.js';

// DynamoDB's time to live, which dynalite does not have: the counters table's items whose `expires_at` has passed
// (rate-limit windows, the collector's salts, sessions and address counts) are deleted by the local server at its
// start and every hour, as AWS deletes them on the stack (within a day or two of their time, by its documentation).

export const SWEEP_EVERY_MS = 60 * 60_000;

/** Deletes the counters items expired at `nowMs`; returns how many. */
export async function sweepExpiredCounters(nowMs = Date.now()): Promise<number> {
  const table = tableNames().counters;
  let deleted = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documentClient().send(
      new ScanCommand({
        TableName: table,
        FilterExpression: 'expires_at < :now',
        ExpressionAttributeValues: { ':now': Math.floor(nowMs / 1000) },
        ProjectionExpression: 'pk',
        ExclusiveStartKey: start,
      }),
    );
    const keys = (page.Items ?? []).map((item) => ({ pk: item.pk as string }));
    for (let i = 0; i < keys.length; i += DYNAMODB_BATCH_WRITE_MAX_ITEMS) {
      let requests = keys.slice(i, i + DYNAMODB_BATCH_WRITE_MAX_ITEMS).map((Key) => ({ DeleteRequest: { Key } }));
      while (requests.length > 0) {
        const answer = await documentClient().send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
        requests = (answer.UnprocessedItems?.[table] ?? []) as typeof requests;
      }
    }
    deleted += keys.length;
    start = page.LastEvaluatedKey;
  } while (start);
  return deleted;
}

/** Sweeps now and every SWEEP_EVERY_MS until stopped. */
export function sweepExpiredCountersEveryHour(): { stop(): Promise<void> } {
  let running = Promise.resolve();
  const sweep = () => {
    running = sweepExpiredCounters().then(
      () => undefined,
      (error: unknown) => logger.error('sweeping expired counters failed', { error: error as Error }),
    );
  };
  sweep();
  const timer = setInterval(sweep, SWEEP_EVERY_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
