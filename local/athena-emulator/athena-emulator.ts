import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Trino, type QueryResult } from 'trino-client';
import { ParameterError, substituteParameters } from './execution-parameters.js';
import { athenaColumnType, athenaText } from './result-text.js';
import { sigV4Problem, type DoorCredentials } from '../server/signed-dynamo-door.js';

// Athena's JSON protocol (the one @aws-sdk/client-athena speaks: POST, `X-Amz-Target: AmazonAthena.<Operation>`,
// `application/x-amz-json-1.1`) backed by a Trino server, so the unchanged Athena engine and the real SDK run
// statements on a real engine. It models the behaviour our engine depends on, the way Athena documents it:
// - StartQueryExecution: returns at once; the statement runs in the background. ExecutionParameters are put in
//   place of the `?`s, which must stand in WHERE clauses only (execution-parameters.ts). A repeated
//   ClientRequestToken returns the first execution. Result reuse, when asked for, matches on the query text
//   alone, the loosest match Athena's documentation allows, and answers with the stored rows.
// - GetQueryExecution: QUEUED, RUNNING, then SUCCEEDED, FAILED (with a reason) or CANCELLED; DataScannedInBytes is
//   the bytes Trino read from the files (physicalInputBytes).
// - GetQueryResults: at most 1000 rows a page, the column names as the first row of the first page, an opaque
//   NextToken, every value as text and NULL as a cell without VarCharValue.
// - StopQueryExecution: cancels the statement on Trino.
// - The account's active-query quota: past `activeQueryQuota` statements QUEUED or RUNNING, StartQueryExecution is
//   refused with TooManyRequestsException (Reason CONCURRENT_QUERY_LIMIT_EXCEEDED), as Athena refuses it.
// - Authentication: a request must be signed (SigV4, service `athena`) with the emulator's credentials, as the
//   local DynamoDB's door checks them (local/server/signed-dynamo-door.ts): another local user or a web page
//   cannot run SQL through it. No CORS headers.
// Not modelled: workgroups' settings, result files on S3, IAM policies.

export interface AthenaEmulatorOptions {
  /** The Trino server (local/trino/trino-server.ts, TrinoAccess); statements run in its catalog `catalog`. */
  trino: {
    server: string;
    ssl: { ca: string };
    extraHeaders: Record<string, string>;
    /** The user its token names. */
    user: string;
  };
  /** The Trino catalog that stands for Athena's data catalog: `hive` by default. */
  catalog?: string;
  /** What clients must sign their requests with. */
  credentials: DoorCredentials;
  /** Statements QUEUED or RUNNING at once, beyond which a start is refused (Athena's default in most regions: 25). */
  activeQueryQuota?: number;
}

export interface AthenaEmulator {
  url: string;
  close(): Promise<void>;
}

type State = 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

interface Execution {
  id: string;
  query: string;
  database: string | undefined;
  workGroup: string;
  state: State;
  reason?: string;
  /** Athena's error of a failed statement (athenaErrorOf). */
  error?: AthenaErrorCode;
  submitted: number;
  completed?: number;
  columns: { name: string; type: string }[];
  rows: (string | undefined)[][];
  bytesScanned: number;
  reused: boolean;
  trinoQueryId?: string;
}

const MAX_PAGE = 1000;
const DEFAULT_REUSE_MINUTES = 60;

class RequestError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly reason?: string,
  ) {
    super(message);
  }
}

const ACTIVE_QUERY_QUOTA = 25;

export async function startAthenaEmulator(options: AthenaEmulatorOptions): Promise<AthenaEmulator> {
  const { user, ...connection } = options.trino;
  const catalog = options.catalog ?? 'hive';
  // Every call as the token's user, cancel() included (the client's default user is the OS user's name).
  const trino = Trino.create({
    ...connection,
    extraHeaders: { ...connection.extraHeaders, 'X-Trino-User': user },
    catalog,
    source: 'athena-emulator',
  });
  const executions = new Map<string, Execution>();
  const byToken = new Map<string, string>();

  // Inputs are the SDK's JSON request bodies; each operation reads and checks the fields it uses.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const operations: Record<string, (input: any) => unknown> = {
    StartQueryExecution(input) {
      const token: string | undefined = input.ClientRequestToken;
      if (token && byToken.has(token)) return { QueryExecutionId: byToken.get(token) };
      if (typeof input.QueryString !== 'string' || input.QueryString.length === 0)
        throw new RequestError('InvalidRequestException', 'QueryString is required');
      const active = [...executions.values()].filter((e) => e.state === 'QUEUED' || e.state === 'RUNNING').length;
      if (active >= (options.activeQueryQuota ?? ACTIVE_QUERY_QUOTA)) {
        throw new RequestError('TooManyRequestsException', 'Rate exceeded', 'CONCURRENT_QUERY_LIMIT_EXCEEDED');
      }
      const parameters: unknown = input.ExecutionParameters;
      let query: string = input.QueryString;
      if (parameters !== undefined) {
        if (!Array.isArray(parameters) || !parameters.every((p) => typeof p === 'string'))
          throw new RequestError('InvalidRequestException', 'ExecutionParameters must be strings');
        try {
          query = substituteParameters(query, parameters);
        } catch (error) {
          if (error instanceof ParameterError) throw new RequestError('InvalidRequestException', error.message);
          throw error;
        }
      }
      const execution: Execution = {
        id: randomUUID(),
        query: input.QueryString,
        database: input.QueryExecutionContext?.Database,
        workGroup: input.WorkGroup ?? 'primary',
        state: 'QUEUED',
        submitted: Date.now(),
        columns: [],
        rows: [],
        bytesScanned: 0,
        reused: false,
      };
      executions.set(execution.id, execution);
      if (token) byToken.set(token, execution.id);
      const reuse = input.ResultReuseConfiguration?.ResultReuseByAgeConfiguration;
      const reusable = reuse?.Enabled
        ? findReusable(execution.query, (reuse.MaxAgeInMinutes ?? DEFAULT_REUSE_MINUTES) * 60_000)
        : undefined;
      if (reusable) {
        Object.assign(execution, {
          state: 'SUCCEEDED',
          completed: Date.now(),
          columns: reusable.columns,
          rows: reusable.rows,
          reused: true,
        });
      } else {
        void run(execution, query);
      }
      return { QueryExecutionId: execution.id };
    },

    GetQueryExecution(input) {
      const e = execution(input.QueryExecutionId);
      return {
        QueryExecution: {
          QueryExecutionId: e.id,
          Query: e.query,
          StatementType: 'DML',
          WorkGroup: e.workGroup,
          QueryExecutionContext: e.database ? { Database: e.database } : {},
          Status: {
            State: e.state,
            SubmissionDateTime: e.submitted / 1000,
            ...(e.completed ? { CompletionDateTime: e.completed / 1000 } : {}),
            ...(e.reason ? { StateChangeReason: e.reason } : {}),
            ...(e.state === 'FAILED'
              ? {
                  AthenaError: {
                    ErrorCategory: e.error?.category ?? 3,
                    ...(e.error ? { ErrorType: e.error.type } : {}),
                    ErrorMessage: e.reason,
                    Retryable: false,
                  },
                }
              : {}),
          },
          Statistics: {
            DataScannedInBytes: e.bytesScanned,
            ...(e.completed
              ? {
                  EngineExecutionTimeInMillis: e.completed - e.submitted,
                  TotalExecutionTimeInMillis: e.completed - e.submitted,
                }
              : {}),
            ResultReuseInformation: { ReusedPreviousResult: e.reused },
          },
        },
      };
    },

    GetQueryResults(input) {
      const e = execution(input.QueryExecutionId);
      if (e.state !== 'SUCCEEDED')
        throw new RequestError('InvalidRequestException', `Query has not yet finished. Current state: ${e.state}`);
      const max = input.MaxResults ?? MAX_PAGE;
      if (!Number.isInteger(max) || max < 1 || max > MAX_PAGE)
        throw new RequestError('InvalidRequestException', `MaxResults must be from 1 to ${MAX_PAGE}`);
      const offset = input.NextToken === undefined ? 0 : decodeToken(input.NextToken, e.id);
      // The first page spends one of its rows on the column names.
      const header = offset === 0 ? [{ Data: e.columns.map((c) => ({ VarCharValue: c.name })) }] : [];
      const end = Math.min(e.rows.length, offset + max - header.length);
      const rows = e.rows
        .slice(offset, end)
        .map((row) => ({ Data: row.map((value) => (value === undefined ? {} : { VarCharValue: value })) }));
      return {
        ResultSet: {
          Rows: [...header, ...rows],
          ResultSetMetadata: {
            ColumnInfo: e.columns.map((c) => ({
              CatalogName: catalog,
              SchemaName: '',
              TableName: '',
              Name: c.name,
              Label: c.name,
              Type: c.type,
              Precision: 0,
              Scale: 0,
              Nullable: 'UNKNOWN',
              CaseSensitive: c.type === 'varchar',
            })),
          },
        },
        ...(end < e.rows.length ? { NextToken: Buffer.from(`${e.id}:${end}`).toString('base64url') } : {}),
        UpdateCount: 0,
      };
    },

    async StopQueryExecution(input) {
      const e = execution(input.QueryExecutionId);
      if (e.state === 'QUEUED' || e.state === 'RUNNING') {
        finish(e, 'CANCELLED', 'Query cancelled by user');
        if (e.trinoQueryId) await trino.cancel(e.trinoQueryId).catch(() => undefined);
      }
      return {};
    },
  };

  function execution(id: unknown): Execution {
    const found = typeof id === 'string' ? executions.get(id) : undefined;
    if (!found) throw new RequestError('InvalidRequestException', `QueryExecution ${String(id)} was not found`);
    return found;
  }

  function findReusable(query: string, maxAgeMs: number): Execution | undefined {
    let best: Execution | undefined;
    for (const e of executions.values()) {
      if (
        e.query === query &&
        e.state === 'SUCCEEDED' &&
        !e.reused &&
        Date.now() - e.completed! <= maxAgeMs &&
        (!best || e.completed! > best.completed!)
      )
        best = e;
    }
    return best;
  }

  function finish(e: Execution, state: State, reason?: string, error?: AthenaErrorCode): void {
    if (e.state !== 'QUEUED' && e.state !== 'RUNNING') return;
    e.state = state;
    e.completed = Date.now();
    if (reason) e.reason = reason;
    if (error) e.error = error;
  }

  async function run(e: Execution, query: string): Promise<void> {
    try {
      const results = await trino.query({
        query,
        catalog,
        ...(e.database ? { schema: e.database } : {}),
        user,
        // Athena runs every statement in UTC.
        extraHeaders: { 'X-Trino-Time-Zone': 'UTC' },
      });
      let last: QueryResult | undefined;
      for await (const page of results) {
        last = page;
        e.trinoQueryId ??= page.id;
        if ((e.state as State) === 'CANCELLED') {
          await trino.cancel(page.id).catch(() => undefined);
          return;
        }
        if (e.state === 'QUEUED' && page.stats?.state !== 'QUEUED') e.state = 'RUNNING';
        if (page.columns && e.columns.length === 0)
          e.columns = page.columns.map((c) => ({ name: c.name, type: athenaColumnType(c.type) }));
        if (page.error) break;
        for (const row of page.data ?? [])
          e.rows.push(row.map((value: unknown, i: number) => athenaText(value, page.columns![i]!.type)));
      }
      e.bytesScanned = last?.stats?.physicalInputBytes ?? 0;
      if (last?.error) {
        finish(e, 'FAILED', last.error.message, athenaErrorOf(last.error.errorType));
      } else {
        finish(e, 'SUCCEEDED');
      }
    } catch (error) {
      finish(e, 'FAILED', `Trino could not run the query: ${(error as Error).message}`, athenaErrorOf('EXTERNAL'));
    }
  }

  const server = createServer((request, response) => {
    void handle(request, response);
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
      response.end(JSON.stringify(body));
    };
    try {
      const target = String(request.headers['x-amz-target'] ?? '');
      const operation = target.startsWith('AmazonAthena.')
        ? operations[target.slice('AmazonAthena.'.length)]
        : undefined;
      if (request.method !== 'POST' || !operation)
        throw new RequestError('UnknownOperationException', `unsupported operation ${target || '(none)'}`);
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const problem = await sigV4Problem(request, body, options.credentials, 'athena');
      if (problem) return reply(403, { __type: problem.type, Message: problem.message });
      const input = body.length ? JSON.parse(body.toString('utf8')) : {};
      reply(200, await operation(input));
    } catch (error) {
      if (error instanceof RequestError)
        reply(400, { __type: error.type, Message: error.message, ...(error.reason ? { Reason: error.reason } : {}) });
      else reply(500, { __type: 'InternalServerException', Message: (error as Error).message });
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function decodeToken(token: unknown, id: string): number {
  const [owner, offset] = typeof token === 'string' ? Buffer.from(token, 'base64url').toString('utf8').split(':') : [];
  const value = Number(offset);
  if (owner !== id || !Number.isInteger(value) || value < 0)
    throw new RequestError('InvalidRequestException', 'NextToken is not valid for this query');
  return value;
}

/** Athena's error category (1 system, 2 user, 3 other) and type (its error catalog) of a failed statement. */
export interface AthenaErrorCode {
  category: number;
  type: number;
}

/**
 * The Athena error of a statement Trino failed, by Trino's error type: a user error is Athena's user error (category
 * 2, type 1000); a lack of memory or time is "Query exhausted resources at this scale factor" (category 1, a type of
 * 0 to 8, all of which the catalog describes alike); anything else "Query engine had an internal error" (1, 200).
 */
export function athenaErrorOf(trinoErrorType: string | undefined): AthenaErrorCode {
  if (trinoErrorType === 'USER_ERROR') return { category: 2, type: 1000 };
  if (trinoErrorType === 'INSUFFICIENT_RESOURCES') return { category: 1, type: 0 };
  return { category: 1, type: 200 };
}
