import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { DuckDbEngine } from '../../shared/engines/duckdb-engine.js';
import { installEngine } from '../../shared/engines/registry.js';
import type { TrinoAccess } from '../trino/trino-server.js';
import { collectRateLimitPerMinute, rateLimitPerMinute } from '../../shared/config.js';
import { jsonResponse } from '../../shared/http/response.js';
import { logger } from '../../shared/log.js';
import { createLocalServer, type ExtraRoutes, type RouteInvoker } from './http-server.js';
import { openApiJson } from './openapi-document.js';
import { referencePageRoutes } from './reference-page.js';
import { dashboardRoutes } from './dashboard-page.js';
import { openLocalDynamo, type LocalDynamo } from './local-dynamo.js';
import type { TrinoAthena } from '../trino/trino-athena.js';
import { compactStore, upgradeStore, whenStoreFree } from '../store/backfill.js';
import { localCodecs } from '../../writer/parquet-codec.js';
import { localPaths, type LocalPaths } from '../store/paths.js';
import { recordStoreDays, recordStoreLayout } from '../store/store-days.js';
import { localBatchSink, type BatchSink } from '../collect/batch-sink.js';
import { installEventSink } from '../../shared/collect/event-sink.js';
import { sweepExpiredCountersEveryHour } from './expired-items.js';

export interface LocalApi {
  url: string;
  paths: LocalPaths;
  dynamo: LocalDynamo;
  /** DuckDB over the store: the engine of `npm start`, and of the store's own upkeep in every mode. */
  engine: DuckDbEngine;
  /** With `engine: 'trino'`: the Athena engine running on Trino, which then answers the queries. */
  trino?: TrinoAthena;
  /** Compaction of the store, run once the server listens: settles with the partitions compacted (null if stopped). */
  compaction: Promise<number | null>;
  /** Where POST /api/event's events wait for their import: `flush()` imports them now. */
  collected: BatchSink;
  /** Stops serving; a compaction still running is aborted and publishes nothing. */
  close(): Promise<void>;
}

/** Which engine answers analytics queries: DuckDB in-process, or the Lambdas' Athena engine on a local Trino. */
export type LocalEngineName = 'duckdb' | 'trino';

export interface LocalApiOptions {
  dataDir?: string;
  port?: number;
  extraRoutes?: ExtraRoutes;
  /** How each route's handler is invoked (the tests run it as its deployed function). */
  invoker?: RouteInvoker;
  backfillRetryMs?: number;
  engine?: LocalEngineName;
  /** With `engine: 'trino'`: how old a result Athena's reuse may serve, in minutes (0, as the stack sets: off). */
  resultReuseMinutes?: number;
  /** With `engine: 'trino'` and no `trinoServer`: the heap of the Trino started, in GiB (2 by default; the bench's own). */
  trinoHeapGiB?: number;
  /** With `engine: 'trino'`: a running Trino to add this store's catalog to, rather than start one (trino-athena.ts). */
  trinoServer?: TrinoAccess;
  /** With `engine: 'trino'`: the most statements run at once (trino-athena.ts; by default two per GiB of its heap). */
  trinoMaxConcurrentQueries?: number;
}

/** ANALYTICS_ENGINE, checked: `duckdb` (the default) or `trino`. */
export function engineFromEnv(env: NodeJS.ProcessEnv = process.env): LocalEngineName {
  const value = env.ANALYTICS_ENGINE ?? 'duckdb';
  if (value !== 'duckdb' && value !== 'trino')
    throw new Error(`ANALYTICS_ENGINE must be duckdb or trino, not "${value}"`);
  return value;
}

/**
 * Everything `npm start` runs, in-process: DynamoDB (dynalite), DuckDB over the Parquet files, the HTTP server;
 * with `engine: 'trino'` also a Trino server and the Athena emulator in front of it (local/trino/trino-athena.ts).
 */
export async function startLocalApi(options: LocalApiOptions = {}): Promise<LocalApi> {
  const paths = localPaths(options.dataDir);
  mkdirSync(paths.dataDir, { recursive: true });
  localCodecs(); // a misspelt ANALYTICS_PARQUET_COMPRESSION stops the start, not a later import or backfill
  rateLimitPerMinute(); // likewise a bad ANALYTICS_RATE_LIMIT_PER_MINUTE: not a 500 on every request
  collectRateLimitPerMinute(); // and a bad COLLECT_RATE_LIMIT_PER_MINUTE: not a 500 on every collected event
  // Queries read the derived relations: a store imported before they existed gets them before the first query,
  // or, while another process imports, as soon as it is done. Compaction changes no answer: it runs once the
  // server listens (below), and queries read the current snapshot until it publishes.
  const upgrade = whenStoreFree(
    () => upgradeStore(paths),
    options.backfillRetryMs,
    (error) => logger.error('upgrade of the store failed', { error }),
  );
  const upgraded = await upgrade.first;
  const dynamo = await openLocalDynamo(paths, { publish: true });
  await recordStoreDays(paths);
  // Upgraded, every file is at the current layout; else the import holding the lock upgrades them as it publishes.
  if (upgraded !== null) await recordStoreLayout(paths);
  const engine = await DuckDbEngine.open(paths.eventsDir);
  // Loaded only in that mode: it synthesizes the CDK stack for its tables, which `npm start` otherwise never needs.
  const trino =
    options.engine === 'trino'
      ? await (
          await import('../trino/trino-athena.js')
        ).startTrinoAthena({
          bucket: { dir: paths.currentLink },
          credentials: dynamo.credentials,
          ...(options.resultReuseMinutes === undefined ? {} : { resultReuseMinutes: options.resultReuseMinutes }),
          ...(options.trinoServer ? { server: options.trinoServer } : {}),
          ...(options.trinoHeapGiB === undefined ? {} : { heapGiB: options.trinoHeapGiB }),
          ...(options.trinoMaxConcurrentQueries === undefined
            ? {}
            : { maxConcurrentQueries: options.trinoMaxConcurrentQueries }),
        })
      : undefined;
  installEngine(trino?.engine ?? engine);
  // POST /api/event writes here: batches imported every few seconds (local/collect/batch-sink.ts).
  const collected = localBatchSink(paths);
  installEventSink(collected);
  // dynalite has no time to live: expired counters (salts, sessions, rate windows) are deleted here.
  const sweeper = sweepExpiredCountersEveryHour();
  let openApi: Promise<string> | undefined;
  const server = createLocalServer(
    {
      // Served with this server as its server, so clients reading it (the /docs page's "Try it out") call this one.
      'GET /openapi.json': async () =>
        jsonResponse(200, {
          ...JSON.parse(await (openApi ??= openApiJson())),
          servers: [{ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, description: 'this server' }],
        }),
      ...referencePageRoutes(),
      ...dashboardRoutes(),
      ...options.extraRoutes,
    },
    options.invoker,
  );
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  const compaction = whenStoreFree(
    (signal) => upgrade.done.then(() => compactStore(paths, { signal })),
    options.backfillRetryMs,
    (error) => logger.error('compaction of the store failed', { error }),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    paths,
    dynamo,
    engine,
    ...(trino ? { trino } : {}),
    compaction: compaction.done,
    collected,
    close: async () => {
      await Promise.all([upgrade.stop(), compaction.stop()]);
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      // Events accepted before the close are imported before the store's services stop.
      await collected.close();
      installEventSink(undefined);
      await sweeper.stop();
      engine.close();
      await trino?.close();
      await dynamo.close();
    },
  };
}
