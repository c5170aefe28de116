import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import type { MotoServer } from '../../local/tools/moto-server.js';
import { documentClient } from '../../shared/store/dynamo-client.js';
import { hiddenFiles } from '../../shared/store/file-states-repo.js';
import { motoClients } from './ingest-bucket.js';
import { keysOf } from './s3-keys.js';

// The S3 store as its readers see it, for tests of the ingest and upkeep functions: the rows of each relation's
// files, less the files the domain's file states hide, by the rule every Athena query applies, read back with DuckDB.
// And a crash injector for writers: it counts every write to S3 and DynamoDB and fails from the chosen one on.

/**
 * Rows of Parquet files (a DuckDB list or glob literal of test-made paths), sorted. Visitor keys and whole marks
 * are left out: a local store assigns them, files on S3 cannot (docs/STORAGE.md).
 */
export async function readRows(files: string): Promise<string[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const rows = (
      await connection.runAndReadAll(
        `SELECT COLUMNS(c -> c NOT IN ('visitor_key', 'whole')) FROM read_parquet(${files}, union_by_name = true, hive_partitioning = false)`,
      )
    ).getRowObjectsJson();
    return rows.map((r) => JSON.stringify(r)).sort();
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** The rows of `folder` (events or a derived relation) a query of the bucket reads, over all domains. */
export async function visibleRows(s3: S3Client, bucket: string, folder: string, workDir: string): Promise<string[]> {
  const files = await visibleFilePaths(s3, bucket, folder, workDir);
  if (files.length === 0) return [];
  return readRows(`[${files.map((f) => `'${f}'`).join(', ')}]`);
}

/**
 * The whole marks of the session fragments a query of the bucket reads: per session, its fragments and how many of
 * them are marked whole.
 */
export async function visibleMarks(
  s3: S3Client,
  bucket: string,
  workDir: string,
): Promise<{ session_id: string; fragments: number; marked: number }[]> {
  const files = await visibleFilePaths(s3, bucket, 'sessions', workDir);
  if (files.length === 0) return [];
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const rows = await connection.runAndReadAll(
      `SELECT session_id, count(*)::INTEGER AS fragments, count(*) FILTER (WHERE whole)::INTEGER AS marked
       FROM read_parquet([${files.map((f) => `'${f}'`).join(', ')}], union_by_name = true, hive_partitioning = false) GROUP BY 1 ORDER BY 1`,
    );
    return rows.getRowObjectsJS() as { session_id: string; fragments: number; marked: number }[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Downloads the files of `folder` a query of the bucket reads; returns their local paths. */
export async function visibleFilePaths(
  s3: S3Client,
  bucket: string,
  folder: string,
  workDir: string,
): Promise<string[]> {
  const keys = (await keysOf(s3, bucket)).filter((k) => k.startsWith(`${folder}/`) && k.endsWith('.parquet'));
  // As every Athena query leaves them out (withExcludedFiles): pending files by name, replaced ones by partition.
  const hidden = new Set<string>();
  const hiddenNames = new Set<string>();
  for (const domain of new Set(keys.map((k) => k.split('/')[1]!.slice('domain='.length)))) {
    const { names, files } = await hiddenFiles(domain);
    for (const file of files) hidden.add(`domain=${domain}/${file}`);
    for (const name of names) hiddenNames.add(`domain=${domain}/${name}`);
  }
  const dir = mkdtempSync(join(workDir, 'read-'));
  const files: string[] = [];
  for (const [i, key] of keys.entries()) {
    const [, domainPart, partition, name] = key.split('/');
    if (hidden.has(`${domainPart}/${partition}/${name}`) || hiddenNames.has(`${domainPart}/${name}`)) continue;
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const file = join(dir, `${i}.parquet`);
    writeFileSync(file, await object.Body!.transformToByteArray());
    files.push(file);
  }
  return files;
}

let dynamoWrites: { count: number; crashAt: number } | undefined;
let installed = false;

/**
 * An S3 client on moto whose writes (put, copy, delete), together with every DynamoDB write of the process, are
 * counted; from write `crashAt` on, each fails as a dead process's would. `disarm` lets DynamoDB writes through
 * again (the S3 client stays dead: the redelivery uses another).
 */
export function crashingWrites(
  server: MotoServer,
  crashAt = Infinity,
): { client: S3Client; count(): number; disarm(): void } {
  const { s3: client } = motoClients(server);
  const state = { count: 0, crashAt };
  const guard = (command: string | undefined, pattern: RegExp) => {
    if (!pattern.test(command ?? '')) return;
    if (state.count >= state.crashAt) throw new Error('the process died');
    state.count += 1;
  };
  client.middlewareStack.add(
    (next, context) => async (args) => (guard(context.commandName, /^(Put|Copy|Delete)Object/), next(args)),
    { step: 'initialize', name: 'crashingWrites' },
  );
  if (!installed) {
    installed = true;
    documentClient().middlewareStack.add(
      (next, context) => async (args) => {
        if (dynamoWrites && /^(Put|Update|Delete)(Item)?Command$/.test(context.commandName ?? '')) {
          if (dynamoWrites.count >= dynamoWrites.crashAt) throw new Error('the process died');
          dynamoWrites.count += 1;
        }
        return next(args);
      },
      { step: 'initialize', name: 'crashingDynamoWrites' },
    );
  }
  dynamoWrites = state;
  return {
    client,
    count: () => state.count,
    disarm: () => {
      dynamoWrites = undefined;
    },
  };
}
