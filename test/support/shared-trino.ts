import { inject } from 'vitest';
import type { TrinoAccess } from '../../local/trino/trino-server.js';

/**
 * The tier's one Trino server (trino-server-setup.ts), for a store's own catalog on it. Called only by files whose
 * suite runs when Trino can (trinoAvailable), in a tier that starts the server (tiers.ts).
 */
export function sharedTrino(): TrinoAccess {
  const trino = inject('trino');
  if (!trino)
    throw new Error("no Trino server for this tier: add test/support/trino-server-setup.ts to its tier's globalSetup");
  return trino;
}
