// Configuration is read from the environment once, on first use, so the local runtime can set the
// environment before any handler module asks for it. On AWS every value comes from the CDK stack.

export interface TableNames {
  credentials: string;
  annotations: string;
  counters: string;
}

export const defaultTableNames: TableNames = {
  credentials: 'analytics-credentials',
  annotations: 'analytics-annotations',
  counters: 'analytics-counters',
};

export function tableNames(): TableNames {
  return {
    credentials: process.env.CREDENTIALS_TABLE ?? defaultTableNames.credentials,
    annotations: process.env.ANNOTATIONS_TABLE ?? defaultTableNames.annotations,
    counters: process.env.COUNTERS_TABLE ?? defaultTableNames.counters,
  };
}

export const RATE_LIMIT_PER_MINUTE = 100;

/**
 * Requests per key and minute: 100, the contract's limit. ANALYTICS_RATE_LIMIT_PER_MINUTE raises it for a local
 * server under a contract fuzzer, which sends thousands of requests with one key; the stack never sets it.
 */
export function rateLimitPerMinute(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.ANALYTICS_RATE_LIMIT_PER_MINUTE;
  if (text === undefined || text === '') return RATE_LIMIT_PER_MINUTE;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 1_000_000)
    throw new Error('ANALYTICS_RATE_LIMIT_PER_MINUTE must be a whole number from 1 to 1000000');
  return value;
}

/**
 * Events per client address and minute that POST /api/event accepts: 600 by default (an office or a school behind
 * one address sends many visitors' events). COLLECT_RATE_LIMIT_PER_MINUTE changes it: set by the stack from its
 * `collectRateLimitPerMinute` setting (infra/settings.ts), locally from the environment.
 */
export function collectRateLimitPerMinute(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.COLLECT_RATE_LIMIT_PER_MINUTE;
  if (text === undefined || text === '') return 600;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 1_000_000)
    throw new Error('COLLECT_RATE_LIMIT_PER_MINUTE must be a whole number from 1 to 1000000');
  return value;
}

/** Default plan event limit for credentials created without `--event-limit`. */
export const DEFAULT_EVENT_LIMIT = 1_000_000_000;

/** How long a resolved credential may be served from the per-process cache (revocation must bite within 10 s). */
export const CREDENTIAL_CACHE_MS = 5_000;

/**
 * Whether statements' rows are kept in the answer cache (shared/store/answer-cache-repo.ts): on unless
 * ANALYTICS_ANSWER_CACHE is `off` (the bench measures the engines with it off). Any other value is refused.
 */
export function isAnswerCacheOn(env: NodeJS.ProcessEnv = process.env): boolean {
  const text = env.ANALYTICS_ANSWER_CACHE;
  if (text === undefined || text === '' || text === 'on') return true;
  if (text === 'off') return false;
  throw new Error(`ANALYTICS_ANSWER_CACHE must be on or off, not "${text}"`);
}
