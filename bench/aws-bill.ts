// What AWS bills for the requests of a dashboard load on the deployed stack, from what the bench counts as it runs
// them (bench/aws-usage.ts, local/trino/trino-query-info.ts). Prices: us-east-1, on-demand, as AWS's price pages give
// them for 2026-11; other regions differ by a few percent to a third.

export const AWS_PRICES = {
  /** Athena (SQL): per TiB scanned, each statement counted as at least 10 MB. */
  athenaPerTiB: 5,
  athenaMinimumBytes: 10 * 1000 ** 2,
  /** S3 Standard requests: LIST (and PUT, COPY, POST) per 1,000; GET per 1,000. */
  s3ListPer1000: 0.005,
  s3PutPer1000: 0.005,
  s3GetPer1000: 0.0004,
  /** Lambda on arm64: per GB-second of duration, and per million requests. */
  lambdaPerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  /** API Gateway HTTP API: per million requests (first 300 million a month). */
  httpApiPerMillionRequests: 1.0,
  /** DynamoDB on-demand: per million read request units, per million write request units. */
  dynamoPerMillionReadUnits: 0.125,
  dynamoPerMillionWriteUnits: 0.625,
} as const;

/** What one API request used of each billed service. */
export interface RequestUsage {
  /** Bytes each Athena statement read (empty: the request started none, e.g. an answer from the cache). */
  statementBytes: number[];
  /**
   * The same statements' bytes when Trino reads only the column chunks they need (bench/api.ts): what Athena bills
   * if it does not read a small file whole as Trino does.
   */
  columnChunkBytes?: number[];
  /** S3 LIST requests Athena made: one per partition a statement lists. */
  s3Lists: number;
  /** S3 GET requests Athena made reading files: one per file a statement opens (Trino's reads of small files). */
  s3Gets: number;
  /** Pages of results read (GetQueryResults): each a GET of the result object Athena wrote with two PUTs. */
  resultPages: number;
  /** API requests, each a function invocation: 1 unless the usage is a whole load's (bench/api.ts runAtOnce). */
  requests?: number;
  /** The query function's duration (the request's time at the server, added up over the requests) and its memory. */
  lambdaMs: number;
  lambdaMemoryMb: number;
  /** DynamoDB capacity the request consumed (keys, rate and usage counters, slots, the answer cache). */
  dynamoReadUnits: number;
  dynamoWriteUnits: number;
}

export interface Bill {
  athena: number;
  s3: number;
  lambda: number;
  apiGateway: number;
  dynamo: number;
  total: number;
}

export function billOf(usage: RequestUsage): Bill {
  const p = AWS_PRICES;
  const athena = usage.statementBytes.reduce(
    (sum, bytes) => sum + (Math.max(bytes, p.athenaMinimumBytes) / 2 ** 40) * p.athenaPerTiB,
    0,
  );
  const statements = usage.statementBytes.length;
  // Each statement's results: Athena PUTs a result object and its metadata; each page read GETs the first.
  const s3 =
    (usage.s3Lists / 1000) * p.s3ListPer1000 +
    ((2 * statements) / 1000) * p.s3PutPer1000 +
    ((usage.s3Gets + usage.resultPages) / 1000) * p.s3GetPer1000;
  const requests = usage.requests ?? 1;
  const lambda =
    (usage.lambdaMs / 1000) * (usage.lambdaMemoryMb / 1024) * p.lambdaPerGbSecond +
    (requests * p.lambdaPerMillionRequests) / 1e6;
  const apiGateway = (requests * p.httpApiPerMillionRequests) / 1e6;
  const dynamo =
    (usage.dynamoReadUnits / 1e6) * p.dynamoPerMillionReadUnits +
    (usage.dynamoWriteUnits / 1e6) * p.dynamoPerMillionWriteUnits;
  return { athena, s3, lambda, apiGateway, dynamo, total: athena + s3 + lambda + apiGateway + dynamo };
}

/** The bills of several requests added up (a dashboard load). */
export function sumBills(bills: Bill[]): Bill {
  const total: Bill = { athena: 0, s3: 0, lambda: 0, apiGateway: 0, dynamo: 0, total: 0 };
  for (const bill of bills) for (const key of Object.keys(total) as (keyof Bill)[]) total[key] += bill[key];
  return total;
}
