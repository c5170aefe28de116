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
  /** Where its time went. */
  profile: StatementProfile;
}

/** A finished statement's times as Trino reports them, and its operators by the CPU they took. */
export interface StatementProfile {
  /** From its creation to its end; its planning (Trino's `planningTime`); its CPU over every thread. */
  elapsedMs: number;
  planningMs: number;
  cpuMs: number;
  /**
   * Its operators, each plan node's operator of a type summed over pipelines and threads, most CPU first: the rows it
   * took in (a scan's rows read from the files) and its CPU (adding input, giving output, finishing).
   */
  operators: { type: string; planNodeId: string; inputRows: number; cpuMs: number }[];
}

interface OperatorSummary {
  operatorType: string;
  planNodeId: string;
  totalDrivers: number;
  inputPositions: number;
  physicalInputPositions: number;
  addInputCpu: string;
  getOutputCpu: string;
  finishCpu: string;
}

interface QueryInfo {
  queryId: string;
  query: string;
  session: { schema?: string };
  inputs: { catalogName: string; schema: string; table: string; connectorInfo?: { partitionIds?: string[] } }[];
  queryStats: {
    physicalInputDataSize: string;
    elapsedTime: string;
    planningTime: string;
    totalCpuTime: string;
    operatorSummaries: OperatorSummary[];
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

/** The operators that read a table's files: one driver per split, their input the rows made from the files. */
const scanOperators = new Set(['TableScanOperator', 'ScanFilterAndProjectOperator']);

export async function statementReads(access: TrinoAccess, queryId: string): Promise<StatementReads> {
  const info = (await getJson(`${access.server}/v1/query/${encodeURIComponent(queryId)}`, access)) as QueryInfo;
  const partitions = new Set<string>();
  for (const input of info.inputs) {
    const table = `${input.catalogName}.${input.schema}.${input.table}`;
    // An unpartitioned table is one listing of its location.
    for (const id of input.connectorInfo?.partitionIds ?? ['']) partitions.add(`${table}/${id}`);
  }
  const splitsRead = info.queryStats.operatorSummaries
    .filter((o) => scanOperators.has(o.operatorType))
    .reduce((sum, o) => sum + o.totalDrivers, 0);
  return {
    queryId,
    partitionsListed: partitions.size,
    splitsRead,
    physicalInputBytes: dataSizeBytes(info.queryStats.physicalInputDataSize),
    query: info.query,
    ...(info.session.schema ? { schema: info.session.schema } : {}),
    profile: statementProfile(info.queryStats),
  };
}

function statementProfile(stats: QueryInfo['queryStats']): StatementProfile {
  const operators = new Map<string, StatementProfile['operators'][number]>();
  for (const o of stats.operatorSummaries) {
    const key = `${o.planNodeId} ${o.operatorType}`;
    const entry = operators.get(key) ?? { type: o.operatorType, planNodeId: o.planNodeId, inputRows: 0, cpuMs: 0 };
    // A scan's input is the pages it made from the files (its physical input), others' the pages handed to them.
    entry.inputRows += scanOperators.has(o.operatorType) ? o.physicalInputPositions : o.inputPositions;
    entry.cpuMs += durationMs(o.addInputCpu) + durationMs(o.getOutputCpu) + durationMs(o.finishCpu);
    operators.set(key, entry);
  }
  return {
    elapsedMs: durationMs(stats.elapsedTime),
    planningMs: durationMs(stats.planningTime),
    cpuMs: durationMs(stats.totalCpuTime),
    operators: [...operators.values()].sort((a, b) => b.cpuMs - a.cpuMs),
  };
}

const durationUnits: Record<string, number> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 };

/** Trino's Duration text (`237.45ms`, `1.20s`, `3.00m`, `850.00us`) in milliseconds. */
export function durationMs(text: string): number {
  const match = /^([\d.]+)(ns|us|ms|s|m|h|d)$/.exec(text);
  if (!match) throw new Error(`not a Trino duration: ${text}`);
  return Number(match[1]) * durationUnits[match[2]!]!;
}

/** Trino's DataSize text (`8408B`, `1.5MB`, `2GB`: powers of 1024) in bytes. */
export function dataSizeBytes(text: string): number {
  const match = /^([\d.]+)(B|kB|MB|GB|TB|PB)$/.exec(text);
  if (!match) throw new Error(`not a Trino data size: ${text}`);
  const power = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'].indexOf(match[2]!);
  return Math.round(Number(match[1]) * 1024 ** power);
}
