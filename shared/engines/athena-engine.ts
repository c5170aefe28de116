import { randomUUID } from 'node:crypto';
import {
  AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
  type ColumnInfo,
  type QueryExecution,
  type Row,
} from '@aws-sdk/client-athena';
import { ATHENA_QUERY_MAX_BYTES, utf8Bytes } from '../aws/service-limits.js';
import { releaseSlot, takeSlot } from '../store/slots-repo.js';
import {
  EngineBusyError,
  EngineResourcesError,
  EngineScanLimitError,
  EngineStatementTooComplexError,
  EngineTimeoutError,
} from './engine-errors.js';
import { requestDeadline, requestLogger } from '../log.js';
import type { DerivedTableNames } from '../query/sql/catalog.js';
import { athenaTarget, type SqlTarget } from '../query/sql/target.js';
import { inlineParameters } from './athena-literals.js';
import type { QueryEngine, QueryStats, SqlRow, SqlValue } from './engine.js';
import type { SqlQuery } from '../query/sql/sql.js';

// The Lambda engine: one Athena query per run() in the stack's workgroup, which enforces the result location,
// encryption and the per-query scan cutoff. Clients never see Athena's message or our SQL (both are logged).

export interface AthenaSettings extends DerivedTableNames {
  workgroup: string;
  database: string;
  table: string;
  /**
   * How old a stored result of the identical statement text may be and still be served; 0 (the default) turns reuse
   * off: the text does not change when new data lands. Repeats are served by the answer cache instead.
   */
  resultReuseMinutes: number;
  /** Start to last poll; past it the query is stopped and the client gets a 504. Below the Lambda timeout. */
  timeoutMs: number;
  /** The events bucket as the tables' locations spell it (`s3://<bucket>`): hidden files are then left out by path. */
  location?: string;
  /**
   * The most statements the whole stack runs at once (every function's, counted in DynamoDB: QuerySlots); a
   * statement waits for a slot, then 503. Below the account's active-query quota; 0: no bound of our own.
   */
  maxConcurrentQueries?: number;
}

/** The stack-wide count of running statements (shared/store/slots-repo.ts on Lambda). */
export interface QuerySlots {
  /**
   * Takes a slot for `holder` for `ms` at most: the number of slots held with it (its own included), 0 when every
   * slot is held.
   */
  take(holder: string, ms: number): Promise<number>;
  release(holder: string): Promise<void>;
}

export interface AthenaEngineOptions {
  client?: AthenaClient;
  /** The stack's slots when `maxConcurrentQueries` is set: by default one item of the counters table. */
  slots?: QuerySlots;
  /** Injected by tests to run the polling loop on a fake clock. */
  sleep?: (ms: number) => Promise<void>;
  /** What names the data under the tables beyond the domains' file states (QueryEngine.dataVersion): a local store's snapshot. */
  dataVersion?: () => string | undefined;
  now?: () => number;
}

/**
 * Athena's account-wide quota for GetQueryExecution: calls a second (Service Quotas, "Per account API call quotas";
 * a call past it is refused with ThrottlingException).
 */
export const GET_QUERY_EXECUTION_QUOTA = 100;
const FIRST_POLL_MS = 100;
/** Without the stack's slots, the longest wait between two polls: an answer waits for the first poll after its end. */
const MAX_POLL_MS = 500;

/**
 * How long a statement waits before its poll number `poll` (0 for the first). With the stack's slots, `held` is the
 * number of its statements running when this one took its slot (its own included), and every wait is
 * max(100 ms, 50 ms + 25 ms x held): a lone statement is answered within 100 ms of its end, and n statements that
 * counted each other poll fewer than 40 times a second together (10 for one, 40n / (n + 2) from two on). Counted
 * as they started one after another, none ending, they stay below Athena's quota of 100 up to 30 slots (84 at the
 * default 20; test/engines/athena-engine.test.ts). Without slots the count is unknown: waits double from 100 ms to
 * 500 ms, at most 2 polls a second per statement.
 */
export function pollWait(held: number | undefined, poll: number): number {
  if (held === undefined) return Math.min(FIRST_POLL_MS * 2 ** poll, MAX_POLL_MS);
  return Math.max(FIRST_POLL_MS, 50 + 25 * held);
}
const PAGE_SIZE = 1_000;
const FIRST_START_RETRY_MS = 200;
const MAX_START_RETRY_MS = 2_000;
/** A start is retried only while this much time is left for the query to run. */
const MIN_QUERY_MS = 2_000;
/**
 * Every call to Athena is cut off, its retries included, at the statement's deadline (the SDK's own socket timeout is
 * 900 s), so a slow or overloaded Athena never holds a request past it. Two exceptions: the results of a statement
 * that succeeded may be read up to RESULTS_GRACE_MS later (its scan is paid for), and a StopQueryExecution may take
 * STOP_MS. Both stay within PAST_REQUEST_DEADLINE_MS of the request's deadline, less than the 1.5 s the handler keeps
 * after it to answer (shared/http/handler.ts, RESPONSE_MARGIN_MS).
 */
const RESULTS_GRACE_MS = 3_000;
const STOP_MS = 2_000;
const PAST_REQUEST_DEADLINE_MS = 1_000;
/** The longest a slot's release is waited for (release). */
const RELEASE_MS = 300;

let sharedClient: AthenaClient | undefined;

/** The stack's query slots in the counters table. */
function dynamoSlots(limit: number): QuerySlots {
  return {
    take: (holder, ms) => takeSlot(QUERY_SLOTS, holder, limit, ms),
    release: (holder) => releaseSlot(QUERY_SLOTS, holder),
  };
}
const QUERY_SLOTS = 'athena-queries';

/** One client per process. The SDK reads AWS_ENDPOINT_URL itself (LocalStack); we never set an endpoint. */
export function athenaClient(): AthenaClient {
  sharedClient ??= new AthenaClient({ maxAttempts: 3 });
  return sharedClient;
}

export class AthenaEngine implements QueryEngine {
  readonly target: SqlTarget;
  readonly billedPerStatement = true;
  private readonly client: AthenaClient;
  private readonly slots: QuerySlots | undefined;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;

  constructor(
    private readonly settings: AthenaSettings,
    options: AthenaEngineOptions = {},
  ) {
    this.target = athenaTarget(settings.database, settings.table, settings, settings.location);
    this.client = options.client ?? athenaClient();
    this.slots = settings.maxConcurrentQueries
      ? (options.slots ?? dynamoSlots(settings.maxConcurrentQueries))
      : undefined;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.now = options.now ?? Date.now;
    if (options.dataVersion) this.dataVersion = options.dataVersion;
  }

  dataVersion?: () => string | undefined;

  /**
   * Runs one statement with every value inlined by the audited literal function, so no `?` reaches Athena (which
   * takes parameters in WHERE only) and every statement's text names its domain (result reuse matches on the text).
   * The statement ends by the earlier of the engine's timeout and the request's deadline (shared by all its
   * statements); any failure after the start stops the query.
   */
  async run(query: SqlQuery): Promise<{ rows: SqlRow[]; stats: QueryStats }> {
    const queryString = inlineParameters(query.sql, query.params);
    // Athena refuses a longer statement outright; only a domain whose hidden files piled up prints one, so the
    // client is told to come back (503) while the reason is logged for the operator.
    if (!fitsAthena(queryString)) {
      requestLogger().error("statement over Athena's query length limit", {
        bytes: utf8Bytes(queryString),
        limit: ATHENA_QUERY_MAX_BYTES,
      });
      throw new EngineBusyError(60);
    }
    const deadline = Math.min(this.now() + this.settings.timeoutMs, requestDeadline() ?? Infinity);
    try {
      return await this.runOnce(queryString, deadline);
    } catch (error) {
      // A file listed by the query and deleted by upkeep before it was opened (a replaced file, past its grace
      // period): the files have changed under the query, and a second run lists them anew.
      if (!(error instanceof VanishedFileError)) throw error;
      requestLogger().warn('athena query read a file deleted meanwhile; running it again', { reason: error.message });
      return await this.runOnce(queryString, deadline).catch((again: unknown) => {
        throw again instanceof VanishedFileError ? new EngineBusyError() : again;
      });
    }
  }

  /** Whether Athena takes the statement: its text, values inlined, within the query length limit. */
  takesStatement(query: SqlQuery): boolean {
    return fitsAthena(inlineParameters(query.sql, query.params));
  }

  private async runOnce(queryString: string, deadline: number): Promise<{ rows: SqlRow[]; stats: QueryStats }> {
    // A statement with less than MAX_POLL_MS left could hardly be waited for: it is not started (nor billed).
    if (deadline - this.now() < MAX_POLL_MS) throw new EngineTimeoutError();
    const slot = await this.takeSlot(deadline);
    try {
      return await this.startAndRead(queryString, deadline, slot?.held);
    } finally {
      if (slot) await this.release(slot.holder);
    }
  }

  /**
   * A slot of the stack's `maxConcurrentQueries`, waited for with growing, jittered pauses while the deadline
   * leaves room for the query itself; then the client gets a 503. Held until the deadline at most, so a run that
   * dies frees its slot by then. Undefined when there is no bound.
   */
  private async takeSlot(deadline: number): Promise<{ holder: string; held: number } | undefined> {
    if (!this.slots) return undefined;
    const holder = randomUUID();
    const taken = await this.retryWithin(deadline, async () => {
      const held = await this.slots!.take(holder, deadline - this.now() + MAX_POLL_MS);
      return held > 0 ? { holder, held } : undefined;
    });
    if (taken !== undefined) return taken;
    requestLogger().warn('every query slot of the stack is held; answering 503', {
      max_concurrent_queries: this.settings.maxConcurrentQueries,
    });
    throw new EngineBusyError();
  }

  /**
   * Gives a slot back, waiting RELEASE_MS at most: a slow or failing counters table neither delays the answer past
   * its deadline nor turns it into an error. A slot not given back stops counting at the end of its hold (the
   * deadline), as a dead function's does.
   */
  private async release(holder: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), RELEASE_MS);
      timer.unref();
    });
    const released = this.slots!.release(holder).then(
      () => 'released' as const,
      (error: unknown) => {
        requestLogger().warn('could not give a query slot back; it ends with its hold', { error: error as Error });
        return 'failed' as const;
      },
    );
    const outcome = await Promise.race([released, late]);
    clearTimeout(timer);
    if (outcome === 'late') requestLogger().warn('giving a query slot back took too long; it ends with its hold');
  }

  /**
   * Tries `attempt` until it gives a value, pausing between tries with growing, jittered waits (200 ms, doubling up
   * to 2 s) while the deadline leaves room for the query itself; undefined once it does not.
   */
  private async retryWithin<T>(
    deadline: number,
    attempt: () => Promise<T | undefined>,
    onPause: (ms: number) => void = () => {},
  ): Promise<T | undefined> {
    let wait = FIRST_START_RETRY_MS;
    for (;;) {
      const value = await attempt();
      if (value !== undefined) return value;
      const pause = wait / 2 + Math.random() * (wait / 2);
      if (this.now() + pause + MIN_QUERY_MS > deadline) return undefined;
      onPause(pause);
      await this.sleep(pause);
      wait = Math.min(wait * 2, MAX_START_RETRY_MS);
    }
  }

  private async startAndRead(
    queryString: string,
    deadline: number,
    held: number | undefined,
  ): Promise<{ rows: SqlRow[]; stats: QueryStats }> {
    const id = await this.start(queryString, deadline);

    let execution: QueryExecution;
    try {
      execution = await this.waitForEnd(id, deadline, held);
    } catch (error) {
      // A query that ended (FAILED, CANCELLED) needs no stop; one still running must not go on, billed, for nobody.
      if (!(error instanceof QueryEndedError)) await this.stop(id);
      throw error instanceof QueryEndedError ? error.cause : error;
    }
    // It succeeded: nothing to stop, and its results (paid for) may be read a little past the deadline.
    const rows = await this.readRows(id, this.lastMoment(deadline + RESULTS_GRACE_MS));
    const bytesScanned = execution.Statistics?.DataScannedInBytes;
    requestLogger().info('athena query', {
      query_execution_id: id,
      bytes_scanned: bytesScanned,
      engine_ms: execution.Statistics?.EngineExecutionTimeInMillis,
      reused: execution.Statistics?.ResultReuseInformation?.ReusedPreviousResult ?? false,
      rows: rows.length,
    });
    return { rows, stats: bytesScanned === undefined ? {} : { bytesScanned } };
  }

  /**
   * Starts the statement. Past the account's active-query quota Athena refuses new queries (TooManyRequestsException)
   * until running ones end: the start is tried again with growing, jittered waits while the deadline leaves room
   * for the query itself, then the client gets a 503.
   */
  private async start(queryString: string, deadline: number): Promise<string> {
    let refused: unknown;
    const token = randomUUID();
    const id = await this.retryWithin(
      deadline,
      async () => {
        try {
          const out = await this.bounded(deadline, token, (options) =>
            this.client.send(
              new StartQueryExecutionCommand({
                WorkGroup: this.settings.workgroup,
                QueryString: queryString,
                QueryExecutionContext: { Database: this.settings.database },
                // A retried StartQueryExecution (the SDK retries throttling) must not start a second query.
                ClientRequestToken: token,
                ResultReuseConfiguration: {
                  ResultReuseByAgeConfiguration: {
                    Enabled: this.settings.resultReuseMinutes > 0,
                    ...(this.settings.resultReuseMinutes > 0
                      ? { MaxAgeInMinutes: this.settings.resultReuseMinutes }
                      : {}),
                  },
                },
              }),
              options,
            ),
          );
          return out.QueryExecutionId!;
        } catch (error) {
          const name = (error as { name?: string }).name;
          if (name !== 'TooManyRequestsException' && name !== 'ThrottlingException') throw engineErrorOf(error);
          refused = error;
          return undefined;
        }
      },
      (ms) =>
        requestLogger().info('athena refused a new query (active-query quota); trying again', {
          wait_ms: Math.round(ms),
        }),
    );
    if (id === undefined) throw engineErrorOf(refused);
    return id;
  }

  /**
   * Polls after pollWait's waits until the query ends; stops it once the deadline passes. A wait that would pass the
   * deadline is cut short, so the last poll still leaves FIRST_POLL_MS for Athena to answer it.
   */
  private async waitForEnd(id: string, deadline: number, held: number | undefined): Promise<QueryExecution> {
    for (let poll = 0; ; poll++) {
      const wait = Math.min(pollWait(held, poll), deadline - FIRST_POLL_MS - this.now());
      if (wait <= 0) {
        requestLogger().warn('athena query timed out', { query_execution_id: id });
        throw new EngineTimeoutError();
      }
      await this.sleep(wait);
      const { QueryExecution: execution } = await this.call(() =>
        this.bounded(deadline, id, (options) =>
          this.client.send(new GetQueryExecutionCommand({ QueryExecutionId: id }), options),
        ),
      );
      const state = execution?.Status?.State;
      if (state === 'SUCCEEDED') return execution!;
      if (state === 'FAILED' || state === 'CANCELLED') throw new QueryEndedError(failure(id, execution!));
    }
  }

  private async stop(id: string): Promise<void> {
    try {
      const until = this.lastMoment(this.now() + STOP_MS);
      await this.client.send(new StopQueryExecutionCommand({ QueryExecutionId: id }), {
        abortSignal: this.abortAt(until),
      });
    } catch (error) {
      // The client gets its 504 either way; a query we could not stop ends at the workgroup's limits.
      requestLogger().warn('could not stop athena query', { query_execution_id: id, error: error as Error });
    }
  }

  private async readRows(id: string, until: number): Promise<SqlRow[]> {
    const rows: SqlRow[] = [];
    let columns: ColumnInfo[] = [];
    let nextToken: string | undefined;
    let firstPage = true;
    do {
      const page = await this.call(() =>
        this.bounded(until, id, (options) =>
          this.client.send(
            new GetQueryResultsCommand({ QueryExecutionId: id, MaxResults: PAGE_SIZE, NextToken: nextToken }),
            options,
          ),
        ),
      );
      if (firstPage) columns = page.ResultSet?.ResultSetMetadata?.ColumnInfo ?? [];
      // A SELECT's first row on the first page repeats the column names.
      const data = (page.ResultSet?.Rows ?? []).slice(firstPage ? 1 : 0);
      for (const row of data) rows.push(decodeRow(row, columns));
      nextToken = page.NextToken;
      firstPage = false;
    } while (nextToken);
    return rows;
  }

  private async call<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw engineErrorOf(error);
    }
  }

  /**
   * One call to Athena cut off at `until`, its retries included; a call its signal ended is an EngineTimeoutError
   * (504), whatever error the SDK gave for it. `what` names the call in the log: the query's id, or the start's
   * ClientRequestToken (a start cut off may have started the query, which then runs to the workgroup's limits).
   */
  private async bounded<T>(
    until: number,
    what: string,
    send: (options: { abortSignal: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    const abortSignal = this.abortAt(until);
    try {
      return await send({ abortSignal });
    } catch (error) {
      if (!abortSignal.aborted) throw error;
      requestLogger().warn('athena did not answer by the deadline', { call_of: what });
      throw new EngineTimeoutError();
    }
  }

  /** A signal that aborts at `until` (on this engine's clock). */
  private abortAt(until: number): AbortSignal {
    return AbortSignal.timeout(Math.max(1, Math.ceil(until - this.now())));
  }

  /** `moment`, or the latest the request's deadline allows past it (PAST_REQUEST_DEADLINE_MS), if earlier. */
  private lastMoment(moment: number): number {
    return Math.min(moment, (requestDeadline() ?? Infinity) + PAST_REQUEST_DEADLINE_MS);
  }
}

function fitsAthena(queryString: string): boolean {
  return utf8Bytes(queryString) <= ATHENA_QUERY_MAX_BYTES;
}

/** Throttling and Athena's own server errors are worth a retry by the client (503); anything else is ours. */
function engineErrorOf(error: unknown): unknown {
  const name = (error as { name?: string }).name;
  if (name === 'TooManyRequestsException' || name === 'ThrottlingException' || name === 'InternalServerException') {
    requestLogger().warn('athena unavailable', { error: error as Error });
    return new EngineBusyError();
  }
  return error;
}

/** Reads ATHENA_* once; missing names are a deployment bug, said plainly at the first analytics request. */
export function athenaSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): AthenaSettings {
  const missing = ['ATHENA_WORKGROUP', 'ATHENA_DATABASE', 'ATHENA_TABLE'].filter((name) => !env[name]);
  if (missing.length) {
    throw new Error(`The Athena engine needs ${missing.join(', ')} in the environment (the CDK stack sets them)`);
  }
  return {
    workgroup: env.ATHENA_WORKGROUP!,
    database: env.ATHENA_DATABASE!,
    table: env.ATHENA_TABLE!,
    ...(env.ATHENA_SESSIONS_TABLE ? { sessionsTable: env.ATHENA_SESSIONS_TABLE } : {}),
    ...(env.ATHENA_BUCKETS_TABLE ? { bucketsTable: env.ATHENA_BUCKETS_TABLE } : {}),
    ...(env.ATHENA_PAGES_TABLE ? { pagesTable: env.ATHENA_PAGES_TABLE } : {}),
    ...(env.ATHENA_VISITORS_TABLE ? { visitorsTable: env.ATHENA_VISITORS_TABLE } : {}),
    ...(env.ATHENA_CUSTOM_EVENTS_TABLE ? { customEventsTable: env.ATHENA_CUSTOM_EVENTS_TABLE } : {}),
    ...(env.ATHENA_EVENTS_LOCATION ? { location: env.ATHENA_EVENTS_LOCATION } : {}),
    resultReuseMinutes: wholeNumber(env, 'ATHENA_RESULT_REUSE_MINUTES', 0, 10_080, 0),
    maxConcurrentQueries: wholeNumber(env, 'ATHENA_MAX_CONCURRENT_QUERIES', 0, 1_000, 0),
    timeoutMs: wholeNumber(env, 'ATHENA_QUERY_TIMEOUT_MS', 1_000, 900_000, 25_000),
  };
}

function wholeNumber(env: NodeJS.ProcessEnv, name: string, min: number, max: number, fallback: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return value;
}

/** A query failed because a file it listed was gone when it opened it. */
class VanishedFileError extends Error {}

/** A query Athena ended itself: nothing to stop. */
class QueryEndedError extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

function failure(id: string, execution: QueryExecution): Error {
  const status = execution.Status ?? {};
  const reason = status.StateChangeReason ?? status.AthenaError?.ErrorMessage ?? '';
  requestLogger().error('athena query did not succeed', {
    query_execution_id: id,
    state: status.State,
    reason,
    error_category: status.AthenaError?.ErrorCategory,
    error_type: status.AthenaError?.ErrorType,
  });
  // The workgroup's BytesScannedCutoffPerQuery cancels (engine v3) or fails the query with this reason.
  if (/bytes scanned limit was exceeded/i.test(reason)) {
    return new EngineScanLimitError();
  }
  // Trino's planner, past query.max-stage-count: "Number of stages in the query (154) exceeds the allowed maximum (150)".
  if (/Number of stages in the query \(\d+\) exceeds the allowed maximum/i.test(reason))
    return new EngineStatementTooComplexError();
  // Trino's Hive connector, on a file listed and then deleted: HIVE_CANNOT_OPEN_SPLIT (S3's NoSuchKey beneath).
  if (/HIVE_CANNOT_OPEN_SPLIT|NoSuchKey|FileNotFoundException/i.test(reason)) return new VanishedFileError(reason);
  // Error types 0-8: "Query exhausted resources at this scale factor" (Athena's error catalog): not our SQL.
  const type = status.AthenaError?.ErrorType;
  if (type !== undefined && type >= 0 && type <= 8) return new EngineResourcesError();
  if (status.AthenaError?.Retryable) return new EngineBusyError();
  return new Error(`Athena query ${id} ${status.State?.toLowerCase()}`);
}

function decodeRow(row: Row, columns: readonly ColumnInfo[]): SqlRow {
  const out: SqlRow = {};
  columns.forEach((column, i) => {
    out[column.Name ?? `_col${i}`] = decodeValue(row.Data?.[i]?.VarCharValue, column.Type ?? 'varchar');
  });
  return out;
}

/** Athena returns every value as text and leaves VarCharValue out for NULL (an empty string is ''). */
export function decodeValue(text: string | undefined, type: string): SqlValue {
  if (text === undefined) return null;
  switch (type.toLowerCase()) {
    case 'tinyint':
    case 'smallint':
    case 'integer':
    case 'bigint':
    case 'real':
    case 'float':
    case 'double':
    case 'decimal':
      // Counts and sums stay far below 2^53; a bigint beyond it would lose its last digits.
      return Number(text);
    case 'boolean':
      return text === 'true';
    default:
      // varchar, char, date, timestamp (`YYYY-MM-DD HH:MM:SS.mmm`), arrays and maps: as Athena printed them.
      return text;
  }
}
