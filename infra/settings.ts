import type { Node } from 'constructs';

// Deployment knobs, read from CDK context (`cdk.json` or `cdk deploy -c name=value`). Values from the command
// line arrive as text, so every number is parsed and range-checked here, once, before any resource exists.

export interface StackSettings {
  /** How old a stored Athena result of the identical query may be and still be served (0 = off, max 7 days). */
  athenaResultReuseMinutes: number;
  /** How long a handler waits for Athena before stopping the query and answering 504. */
  athenaQueryTimeoutMs: number;
  /** The workgroup cancels any query that would scan more (Athena's minimum is 10 MB). */
  bytesScannedCutoffPerQuery: number;
  /** The alarm topic hears when the workgroup's queries scan more than this in one hour (all queries together). */
  athenaHourlyBytesAlarm: number;
  /**
   * Athena statements the API runs at once, all functions together (0: no bound of the stack's own). Below the
   * account's active-query quota (25 in most regions), so that a burst waits for a slot instead of being refused.
   */
  athenaMaxConcurrentQueries: number;
  /** Ingests running at once (SQS event source maximum concurrency, 2 to 1000). */
  ingestMaxConcurrency: number;
  /** Query results are deleted after this many days. */
  athenaResultsRetentionDays: number;
  logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** API Gateway stage throttling, requests per second and burst, across all keys. */
  apiRateLimit: number;
  apiBurstLimit: number;
  /** Events one client (an IPv4 address, or an IPv6 /64) may send to POST /api/event per minute (the collector's own limit). */
  collectRateLimitPerMinute: number;
  /**
   * Origins (`https://host[:port]`) whose pages may call the API from a browser: where the dashboard is hosted
   * (docs/DEPLOY.md, "Hosting the dashboard"). None by default: no CORS headers at all.
   */
  dashboardOrigins: string[];
}

/** The Lambda timeout of analytics functions; HTTP APIs cut every integration off at 30 s. */
export const ANALYTICS_FUNCTION_TIMEOUT_SECONDS = 29;

export const defaultSettings: StackSettings = {
  athenaResultReuseMinutes: 0,
  athenaQueryTimeoutMs: 25_000,
  // The widest dashboard request measured reads about 54 bytes per event in its range (docs/DEPLOY.md, "Sizing the
  // scan limits"): 5 GiB serves ranges of about 100 million events, and caps a runaway query at $0.025.
  bytesScannedCutoffPerQuery: 5 * 1024 ** 3,
  athenaHourlyBytesAlarm: 50 * 1024 ** 3,
  athenaMaxConcurrentQueries: 20,
  ingestMaxConcurrency: 2,
  athenaResultsRetentionDays: 7,
  logLevel: 'INFO',
  apiRateLimit: 100,
  apiBurstLimit: 200,
  collectRateLimitPerMinute: 600,
  dashboardOrigins: [],
};

export function settingsFromContext(node: Node): StackSettings {
  const number = (name: keyof StackSettings, min: number, max: number): number => {
    const raw: unknown = node.tryGetContext(name);
    if (raw === undefined) return defaultSettings[name] as number;
    const value = typeof raw === 'number' ? raw : Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new Error(`context ${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
    }
    return value;
  };
  // The Glue projection spans every day the importer accepts (infra/event-lake.ts): no start date to choose.
  if (node.tryGetContext('eventsStartDate') !== undefined)
    throw new Error(
      'context eventsStartDate is no longer used: the tables project every day an import accepts (1970-01-01 to 2099-12-31); remove it',
    );
  const logLevel = String(node.tryGetContext('logLevel') ?? defaultSettings.logLevel).toUpperCase();
  if (!['DEBUG', 'INFO', 'WARN', 'ERROR'].includes(logLevel))
    throw new Error('context logLevel must be DEBUG, INFO, WARN or ERROR');
  const origins: unknown = node.tryGetContext('dashboardOrigins') ?? [];
  const dashboardOrigins = (Array.isArray(origins) ? origins : String(origins).split(','))
    .map((o) => String(o).trim())
    .filter(Boolean);
  for (const origin of dashboardOrigins) {
    if (!/^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/i.test(origin))
      throw new Error(
        `context dashboardOrigins must list origins like https://dashboard.example.com, got ${JSON.stringify(origin)}`,
      );
  }
  return {
    athenaResultReuseMinutes: number('athenaResultReuseMinutes', 0, 10_080),
    // Leaves the handler a few seconds inside its own timeout to read results and answer.
    athenaQueryTimeoutMs: number('athenaQueryTimeoutMs', 1_000, (ANALYTICS_FUNCTION_TIMEOUT_SECONDS - 3) * 1000),
    bytesScannedCutoffPerQuery: number('bytesScannedCutoffPerQuery', 10_000_000, Number.MAX_SAFE_INTEGER),
    athenaHourlyBytesAlarm: number('athenaHourlyBytesAlarm', 10_000_000, Number.MAX_SAFE_INTEGER),
    athenaMaxConcurrentQueries: number('athenaMaxConcurrentQueries', 0, 1000),
    ingestMaxConcurrency: number('ingestMaxConcurrency', 2, 1000),
    athenaResultsRetentionDays: number('athenaResultsRetentionDays', 1, 3650),
    logLevel: logLevel as StackSettings['logLevel'],
    apiRateLimit: number('apiRateLimit', 1, 10_000),
    apiBurstLimit: number('apiBurstLimit', 1, 5_000),
    collectRateLimitPerMinute: number('collectRateLimitPerMinute', 1, 1_000_000),
    dashboardOrigins,
  };
}
