import { RATE_LIMIT_PER_MINUTE } from '../config.js';
import { ConcurrencyLimitedError } from '../errors.js';

// Requests of one key running at once in this process. A Lambda instance serves one request at a time, so there
// nothing ever waits; the local server shares one engine among all keys, so a key's requests past
// MAX_RUNNING_PER_KEY wait their turn (a dashboard sends a dozen at once), and one key's heavy queries hold at most
// that many of the engine's slots while other keys' requests go ahead. A key's waiting requests are bounded by its
// rate limit in practice; past MAX_WAITING_PER_KEY waiting, a 429 bounds the memory they can hold.

export const MAX_RUNNING_PER_KEY = 4;
export const MAX_WAITING_PER_KEY = RATE_LIMIT_PER_MINUTE;

const running = new Map<string, number>();
const waiting = new Map<string, (() => void)[]>();

/** Waits for one of `keyId`'s slots; returns its release. Throws a 429 when too many already wait. */
export async function enterRequest(keyId: string): Promise<() => void> {
  const count = running.get(keyId) ?? 0;
  if (count < MAX_RUNNING_PER_KEY) running.set(keyId, count + 1);
  else {
    const queue = waiting.get(keyId) ?? [];
    if (queue.length >= MAX_WAITING_PER_KEY)
      throw new ConcurrencyLimitedError(MAX_RUNNING_PER_KEY + MAX_WAITING_PER_KEY);
    waiting.set(keyId, queue);
    // The slot is handed over by a release: the running count stays as it is.
    await new Promise<void>((resolve) => queue.push(resolve));
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const next = waiting.get(keyId)?.shift();
    if (waiting.get(keyId)?.length === 0) waiting.delete(keyId);
    if (next) return next();
    const left = (running.get(keyId) ?? 1) - 1;
    if (left > 0) running.set(keyId, left);
    else running.delete(keyId);
  };
}
