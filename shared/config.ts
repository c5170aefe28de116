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

/** Default plan event limit for credentials created without `--event-limit`. */
export const DEFAULT_EVENT_LIMIT = 1_000_000_000;

/** How long a resolved credential may be served from the per-process cache (revocation must bite within 10 s). */
export const CREDENTIAL_CACHE_MS = 5_000;
