import { getJson, type TrinoAccess } from './trino-server.js';

// What Trino says a finished statement read, from its query info (`GET /v1/query/{id}`): the partitions each table
// scan listed (the Hive connector's `partitionIds`) and the splits its table scans read. Athena runs statements on
// Trino and lists and reads S3 as Trino's Hive connector does; these are the facts its S3 requests follow
// (test/cloud/athena-s3-requests.test.ts counts Trino's requests on an S3 server against them).

export interface StatementReads {
  queryId: string;
  /** Distinct (table, partition) pairs the statement's scans listed: a table scanned twice lists once per statement. */
  partitionsListed: number;
  /** Splits its table scans read, over all scans: one per file, the files being below Trino's split size. */
  splitsRead: number;
  /** Bytes read from the files (what Athena bills as DataScannedInBytes). */
  physicalInputBytes: number;
  /** The statement's text as Trino ran it, and the schema it ran in. */
  query: string;
  schema?: string;
}

interface QueryInfo {
  queryId: string;
  query: string;
  session: { schema?: string };
  inputs: { catalogName: string; schema: string; table: string; connectorInfo?: { partitionIds?: string[] } }[];
  queryStats: {
    physicalInputDataSize: string;
    operatorSummaries: { operatorType: string; totalDrivers: number }[];
  };
}

/** A statement as Trino's query list gives it (`GET /v1/query`): recent statements, finished or not. */
export interface BasicQueryInfo {
  queryId: string;
  state: string;
  errorCode?: { name: string };
  session: { source?: string; catalog?: string };
  queryStats: { createTime: string; endTime?: string };
}

/** The statements Trino still holds in its query list. */
export async function queryList(access: TrinoAccess): Promise<BasicQueryInfo[]> {
  return (await getJson(`${access.server}/v1/query`, access)) as BasicQueryInfo[];
}

/**
 * The statements from `source` that finished since `since` (oldest first); with `cancelled`, also those stopped
 * before the end (Trino's FAILED with USER_CANCELED), which Athena bills for what they scanned. Statements that failed
 * on their own are left out: Athena does not bill them.
 */
export async function finishedStatements(
  access: TrinoAccess,
  source: string,
  since: Date,
  options: { cancelled?: boolean } = {},
): Promise<string[]> {
  const all = await queryList(access);
  const billed = (q: BasicQueryInfo) =>
    q.state === 'FINISHED' || (options.cancelled === true && q.errorCode?.name === 'USER_CANCELED');
  return all
    .filter((q) => q.session.source === source && billed(q) && new Date(q.queryStats.createTime) >= since)
    .sort((a, b) => a.queryStats.createTime.localeCompare(b.queryStats.createTime))
    .map((q) => q.queryId);
}

export async function statementReads(access: TrinoAccess, queryId: string): Promise<StatementReads> {
  const info = (await getJson(`${access.server}/v1/query/${encodeURIComponent(queryId)}`, access)) as QueryInfo;
  const partitions = new Set<string>();
  for (const input of info.inputs) {
    const table = `${input.catalogName}.${input.schema}.${input.table}`;
    // An unpartitioned table is one listing of its location.
    for (const id of input.connectorInfo?.partitionIds ?? ['']) partitions.add(`${table}/${id}`);
  }
  const splitsRead = info.queryStats.operatorSummaries
    .filter((o) => o.operatorType === 'TableScanOperator' || o.operatorType === 'ScanFilterAndProjectOperator')
    .reduce((sum, o) => sum + o.totalDrivers, 0);
  return {
    queryId,
    partitionsListed: partitions.size,
    splitsRead,
    physicalInputBytes: dataSizeBytes(info.queryStats.physicalInputDataSize),
    query: info.query,
    ...(info.session.schema ? { schema: info.session.schema } : {}),
  };
}

/** Trino's DataSize text (`8408B`, `1.5MB`, `2GB`: powers of 1024) in bytes. */
export function dataSizeBytes(text: string): number {
  const match = /^([\d.]+)(B|kB|MB|GB|TB|PB)$/.exec(text);
  if (!match) throw new Error(`not a Trino data size: ${text}`);
  const power = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'].indexOf(match[2]!);
  return Math.round(Number(match[1]) * 1024 ** power);
}
