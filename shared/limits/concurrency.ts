import { ConcurrencyLimitedError } from '../errors.js';

// Requests of one key in flight at once in this process. A Lambda instance serves one request at a time, so there
// this never refuses; the local server shares one engine among all keys, and a key that sends many heavy queries
// at once gets a 429 past the limit instead of queueing everyone else behind them.

export const MAX_CONCURRENT_PER_KEY = 4;
const inFlight = new Map<string, number>();

/** Counts a request of `keyId` in; returns its release. Throws a 429 past MAX_CONCURRENT_PER_KEY. */
export function enterRequest(keyId: string): () => void {
  const current = inFlight.get(keyId) ?? 0;
  if (current >= MAX_CONCURRENT_PER_KEY) throw new ConcurrencyLimitedError(MAX_CONCURRENT_PER_KEY);
  inFlight.set(keyId, current + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (inFlight.get(keyId) ?? 1) - 1;
    if (left > 0) inFlight.set(keyId, left);
    else inFlight.delete(keyId);
  };
}
