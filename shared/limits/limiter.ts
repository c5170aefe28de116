import { rateLimitPerMinute } from '../config.js';
import { RateLimitedError, UsageLimitError } from '../errors.js';
import type { Credential } from '../store/credentials-repo.js';
import { add, addBelowLimit, addOnce, forgetToken, read } from '../store/counters-repo.js';

// Fixed one-minute windows per credential, and calendar months (UTC) per domain for usage. Both live in
// DynamoDB so every Lambda instance shares them; items expire by TTL once their window is over.

const WINDOW_SECONDS = 60;

export function rateLimitKey(keyId: string, windowStart: number): string {
  return `rate#${keyId}#${windowStart}`;
}

export function usageKey(domain: string, now = new Date()): string {
  return `usage#${domain}#${now.toISOString().slice(0, 7)}`;
}

/**
 * Counts one request in the current fixed minute of the counter `name(windowStart)`, unless it already holds `limit`:
 * whether it was admitted, the count, when the minute ends and, when refused, the seconds to wait.
 */
export async function countInMinute(
  name: (windowStart: number) => string,
  limit: number,
  nowMs = Date.now(),
): Promise<{ admitted: boolean; count: number; reset: number; retryAfter: number }> {
  const now = Math.floor(nowMs / 1000);
  const windowStart = now - (now % WINDOW_SECONDS);
  const reset = windowStart + WINDOW_SECONDS;
  const result = await addBelowLimit(name(windowStart), 1, limit, reset + WINDOW_SECONDS);
  return {
    admitted: result.admitted,
    count: result.admitted ? result.count : limit,
    reset,
    retryAfter: Math.max(1, reset - now),
  };
}

/** Counts the request against its credential's minute; returns the X-RateLimit-* headers or throws a 429. */
export async function admitRequest(credential: Credential, nowMs = Date.now()): Promise<Record<string, string>> {
  const limit = rateLimitPerMinute();
  const result = await countInMinute((windowStart) => rateLimitKey(credential.keyId, windowStart), limit, nowMs);
  const headers = {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(result.admitted ? Math.max(0, limit - result.count) : 0),
    'x-ratelimit-reset': String(result.reset),
  };
  if (!result.admitted) {
    const error = new RateLimitedError(result.retryAfter);
    Object.assign(error.headers, headers);
    throw error;
  }
  return headers;
}

/**
 * Counts `calls` API calls (a batch's queries; one for any other request) against the domain's month while the
 * rate-limit update (`admission`, already in flight) completes: both updates travel at once, so the limits cost one
 * DynamoDB round trip. The calls are admitted together only where all fit below the limit. A request refused by the
 * rate limit gives its usage back; one refused by the usage limit answers 403.
 */
export async function admitDomainRequest(
  admission: Promise<unknown>,
  credential: Credential,
  domain: string,
  now = new Date(),
  calls = 1,
): Promise<void> {
  const key = usageKey(domain, now);
  const limit = credential.eventLimit;
  // `n < limit - calls + 1` is `n + calls <= limit`: the condition addBelowLimit writes is `n < limit`.
  const usage =
    calls > limit
      ? Promise.resolve({ admitted: false })
      : addBelowLimit(key, calls, limit - calls + 1, monthExpiry(now));
  const [rate, counted] = await Promise.allSettled([admission, usage]);
  if (rate.status === 'rejected') {
    if (counted.status === 'fulfilled' && counted.value.admitted) await add(key, -calls, monthExpiry(now));
    throw rate.reason;
  }
  if (counted.status === 'rejected') throw counted.reason;
  if (!counted.value.admitted) throw new UsageLimitError(limit);
}

/** Imported events count toward the month they are imported in. */
export async function recordImportedEvents(domain: string, count: number, now = new Date()): Promise<number> {
  return add(usageKey(domain, now), count, monthExpiry(now));
}

/**
 * Counts an import's events once: a second call with the same `importId` (the import's digest) adds nothing, so an
 * import whose count is retried after a crash is never counted twice. Once the import's own record is written (a
 * retry then stops before counting), forgetImportCount drops the id from the month's item.
 */
export async function recordImportedEventsOnce(
  domain: string,
  count: number,
  importId: string,
  now = new Date(),
): Promise<void> {
  await addOnce(usageKey(domain, now), count, importId, monthExpiry(now));
}

/** After the import's record: its id is no longer needed to keep a retry from counting again. `now` as counted. */
export async function forgetImportCount(domain: string, importId: string, now: Date): Promise<void> {
  await forgetToken(usageKey(domain, now), importId);
}

export async function readUsage(domain: string, now = new Date()): Promise<number> {
  return read(usageKey(domain, now));
}

/** Usage items outlive their month by a year, for support questions about past bills. */
function monthExpiry(now: Date): number {
  return Math.floor(Date.UTC(now.getUTCFullYear() + 1, now.getUTCMonth() + 1, 1) / 1000);
}
