import type { TestProject } from 'vitest/node';
import { findJava, provisionTrino } from '../../local/tools/trino-install.js';
import { startTrino, type TrinoAccess } from '../../local/trino/trino-server.js';

// One Trino server for a tier's whole run (the global setup of the tiers whose files run SQL on Trino: tiers.ts):
// each store a test file starts gets a catalog of its own on it (local/trino/trino-athena.ts), so the JVM starts
// once per run rather than once per file. Where no Java 24+ exists the server is not started; the suites then skip
// themselves, or fail under TRINO_REQUIRED=1 (trino-available.ts).
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if ('missing' in findJava()) {
    project.provide('trino', null);
    return async () => undefined;
  }
  const server = await startTrino(await provisionTrino(), { catalogsByStatement: true });
  project.provide('trino', server.access);
  return () => server.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The tier's Trino server, or null where it cannot run. */
    trino: TrinoAccess | null;
  }
}
