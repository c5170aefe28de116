import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../config.js';
import type { SqlRow } from '../engines/engine.js';
import type { SqlQuery } from '../query/sql/sql.js';
import { documentClient } from './dynamo-client.js';

// The exact answer cache (docs/API.md, "Cached answers"): the rows of a printed statement, kept under a key made of
// the statement's text, its bound values and the data version of the domain it reads. A version moves whenever what
// queries of the domain read changes (a publish, a compaction: shared/store/file-states-repo.ts on S3, the current
// snapshot locally), so a cached answer is exact or never found again. Items `answer#<sha256>` in the counters
// table, gzip JSON, expiring after ANSWER_TTL_SECONDS by the table's TTL.

/** How long an unused answer stays; DynamoDB removes expired items within days, readers skip them at once. */
export const ANSWER_TTL_SECONDS = 7 * 24 * 3600;
/** The largest answer kept, compressed: DynamoDB's item limit is 400 KB. Larger answers are computed every time. */
export const MAX_ANSWER_BYTES = 300 * 1024;

/** The cache key of `query` run on `engine` (its dialect) over data of `version`. */
export function answerKey(engine: string, version: string, query: SqlQuery): string {
  return createHash('sha256')
    .update(JSON.stringify([engine, version, query.sql, query.params]))
    .digest('hex');
}

export async function readAnswer(key: string, now = Date.now()): Promise<SqlRow[] | undefined> {
  // Eventually consistent: an answer written moments ago may be missed, never a wrong one found (keys are exact).
  const { Item } = await documentClient().send(
    new GetCommand({ TableName: tableNames().counters, Key: { pk: `answer#${key}` } }),
  );
  if (!Item || Number(Item.expires_at) * 1000 <= now) return undefined;
  return JSON.parse(gunzipSync(Item.rows as Uint8Array).toString('utf8')) as SqlRow[];
}

/** Keeps `rows` under `key`; false when they are too large to keep or hold values JSON cannot carry back exactly. */
export async function writeAnswer(key: string, rows: SqlRow[], now = Date.now()): Promise<boolean> {
  if (rows.some((row) => Object.values(row).some((v) => typeof v === 'number' && !Number.isFinite(v)))) return false;
  const body = gzipSync(JSON.stringify(rows));
  if (body.length > MAX_ANSWER_BYTES) return false;
  // UpdateItem, the write every function may make in the counters table (its role grants GetItem and UpdateItem).
  await documentClient().send(
    new UpdateCommand({
      TableName: tableNames().counters,
      Key: { pk: `answer#${key}` },
      UpdateExpression: 'SET #rows = :rows, expires_at = :exp',
      ExpressionAttributeNames: { '#rows': 'rows' },
      ExpressionAttributeValues: { ':rows': body, ':exp': Math.floor(now / 1000) + ANSWER_TTL_SECONDS },
    }),
  );
  return true;
}
