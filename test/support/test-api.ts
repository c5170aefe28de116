import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalApi, type LocalApi, type LocalApiOptions } from '../../local/server/local-api.js';
import type { ImportReport } from '../../writer/importer.js';
import { asFunction } from './aws-rules/install.js';
import { sharedTrino } from './shared-trino.js';
import { createCredential, type NewCredential, type CreatedCredential } from '../../shared/services/credentials.js';

// A real local API for a test file: its own data folder, dynalite and DuckDB, the real HTTP server.

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface TestApi extends LocalApi {
  /** The API's data folder (a fresh temporary one). */
  dataDir: string;
  createKey(input: NewCredential): Promise<CreatedCredential>;
  importEvents(events: unknown[]): Promise<ImportReport>;
  request<T = any>(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; rawBody?: string; query?: Record<string, string> },
  ): Promise<TestResponse<T>>;
}

/**
 * `dataDir`: a data folder an earlier API left (removed on close like a fresh one); by default a fresh one. With
 * `engine: 'trino'`, the store gets a catalog of its own on the tier's one Trino server (trino-server-setup.ts), or
 * with `ownTrino` a Trino server of its own, started and configured exactly as `npm start` does.
 */
export async function startTestApi(
  options: Pick<LocalApiOptions, 'engine' | 'dataDir' | 'trinoMaxConcurrentQueries'> & { ownTrino?: boolean } = {},
): Promise<TestApi> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'analytics-test-'));
  let api: LocalApi;
  try {
    // Each route runs as its deployed function: its DynamoDB and Athena calls are authorized against its role.
    const { ownTrino, ...localOptions } = options;
    api = await startLocalApi({
      ...localOptions,
      ...(options.engine === 'trino' && !ownTrino ? { trinoServer: sharedTrino() } : {}),
      dataDir,
      invoker: (route, invoke) => asFunction(route.name, invoke),
    });
  } catch (error) {
    // A start that fails (the tests of bad settings) leaves no data folder behind either.
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    ...api,
    dataDir,
    close: async () => {
      await api.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
    createKey: (input) => createCredential(input),
    importEvents: async (events) =>
      (await import('../../local/store/local-destination.js')).importEvents(events, api.paths),
    request: async (method, path, options = {}) => {
      const url = new URL(path, api.url);
      for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, v);
      const headers: Record<string, string> = {};
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      let body: string | undefined = options.rawBody;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] = 'application/json';
      }
      const res = await fetch(url, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // leave as text
      }
      return { status: res.status, headers: res.headers, body: parsed as any };
    },
  };
}
