import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AthenaClient } from '@aws-sdk/client-athena';
import { AthenaEngine, type AthenaSettings } from '../../shared/engines/athena-engine.js';
import { snapshotOf } from '../../shared/engines/duckdb-engine.js';
import {
  CUSTOM_EVENT_BUCKETS_TABLE,
  PAGE_BUCKETS_TABLE,
  PAGEVIEW_BUCKETS_TABLE,
  SESSION_FRAGMENTS_TABLE,
  VISITOR_DAYS_TABLE,
} from '../../shared/events/derived-relations.js';
import { EVENTS_TABLE } from '../../infra/event-lake.js';
import { startAthenaEmulator, type AthenaEmulator } from '../athena-emulator/athena-emulator.js';
import type { DoorCredentials } from '../server/signed-dynamo-door.js';
import { EVENTS_BUCKET, synthesizedGlueTables } from './glue-tables.js';
import {
  createCatalogStatement,
  createTableStatements,
  dropCatalogStatement,
  hiveCatalogProperties,
} from './trino-catalog.js';
import { provisionTrino } from '../tools/trino-install.js';
import { runToCompletion } from './trino-statements.js';
import {
  DEFAULT_HEAP_GIB,
  startTrino,
  type TrinoAccess,
  type TrinoServer,
  type TrinoServerOptions,
} from './trino-server.js';

// The cloud query path on this machine: the Athena engine the Lambdas run, unchanged, with the real Athena SDK,
// talking to the Athena emulator, which runs each statement on a real Trino over the store's current snapshot
// (laid out as the events bucket is: `events/`, `sessions/`, ... each `domain=<d>/dt=<day>/*.parquet`), in tables
// created from the stack's own Glue definitions.

export interface TrinoAthena {
  engine: AthenaEngine;
  /** What was provisioned and how long each step took, for the start-up message. */
  report: string;
  /** The Athena emulator's URL: AWS_ENDPOINT_URL_ATHENA for a function run in the local Lambda runtime. */
  endpoint: string;
  /** The bucket the tables read, as Trino spells a file's path (the engine's `location`). */
  location: string;
  /** What a client of the emulator signs with. */
  credentials: DoorCredentials;
  /** Trino itself, behind the emulator: HTTPS with this run's certificate and token (trino-server.ts). */
  trino: TrinoAccess;
  /** The Trino catalog holding this store's tables (`hive` on a server of its own). */
  catalog: string;
  close(): Promise<void>;
}

/** Where the events bucket is: a local folder laid out like it, or a bucket of an S3-compatible server. */
export type BucketLocation = { dir: string } | { s3: NonNullable<TrinoServerOptions['s3']> & { bucket: string } };

/** The Athena settings the stack gives its functions, less what only AWS has. */
export interface TrinoAthenaOptions {
  /** The events bucket: for `npm start`, the store's `current` snapshot link. */
  bucket: BucketLocation;
  resultReuseMinutes?: number;
  timeoutMs?: number;
  /** What the emulator's clients must sign with (the data folder's, for `npm start`); by default made for this run. */
  credentials?: DoorCredentials;
  /**
   * A Trino server already running with `catalogsByStatement` (the tests' one server): the tables go into a catalog
   * of their own, which close() drops, leaving the server running. Without it, a server is started for this store.
   */
  server?: TrinoAccess;
  /** Without `server`: the heap of the Trino started for this store, in GiB (trino-server.ts; 2 by default). */
  heapGiB?: number;
  /**
   * The most statements the engine runs at once, in the stack's query slots (AthenaSettings.maxConcurrentQueries;
   * the local DynamoDB's counters table); 0 for no bound. By default, on a server of its own, two per GiB of heap:
   * at 10M events a 2 GiB Trino sent the dashboard mix's 13 statements at once ran out of memory and stopped, and
   * answered all 13 run four at a time; an 8 GiB one answered all 13 at once. On a shared server (the tests'), none.
   */
  maxConcurrentQueries?: number;
}

/** Statements at once on a Trino of its own, per GiB of its heap (TrinoAthenaOptions.maxConcurrentQueries). */
const STATEMENTS_PER_HEAP_GIB = 2;

export async function startTrinoAthena(options: TrinoAthenaOptions): Promise<TrinoAthena> {
  const started = performance.now();
  const step = () => Math.round(performance.now() - started);
  const install = options.server ? undefined : await provisionTrino();
  const credentials = options.credentials ?? {
    accessKeyId: `LOCAL${randomBytes(8).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString('base64url'),
  };
  const provisionedMs = step();
  const bucket = options.bucket;
  const s3 = 's3' in bucket ? bucket.s3 : undefined;
  let trino: TrinoServer | undefined;
  let shared: { access: TrinoAccess; catalog: string; metastoreDir: string } | undefined;
  let emulator: AthenaEmulator | undefined;
  const release = async () => {
    await emulator?.close();
    await trino?.stop();
    if (shared) {
      await runToCompletion(shared.access, dropCatalogStatement(shared.catalog));
      rmSync(shared.metastoreDir, { recursive: true, force: true });
    }
  };
  try {
    if (options.server) {
      const metastoreDir = mkdtempSync(join(tmpdir(), 'analytics-catalog-'));
      shared = { access: options.server, catalog: `store_${randomBytes(6).toString('hex')}`, metastoreDir };
      await runToCompletion(
        shared.access,
        createCatalogStatement(shared.catalog, hiveCatalogProperties(metastoreDir, s3)),
      );
    } else
      trino = await startTrino(install!, {
        ...(s3 ? { s3 } : {}),
        ...(options.heapGiB === undefined ? {} : { heapGiB: options.heapGiB }),
      });
    const access = shared?.access ?? trino!.access;
    const catalog = shared?.catalog ?? 'hive';
    const serverMs = step();
    const tables = synthesizedGlueTables();
    for (const table of tables) {
      // Trino requires a table's location to exist; a store without events yet lacks the folders. An empty folder
      // holds no rows, so adding it changes no snapshot's content. (On S3 any prefix exists.)
      if ('dir' in bucket) mkdirSync(table.location.replace(`s3://${EVENTS_BUCKET}`, bucket.dir), { recursive: true });
      const bucketUrl = 'dir' in bucket ? `local://${bucket.dir}` : `s3://${bucket.s3.bucket}`;
      for (const statement of createTableStatements(table, bucketUrl, catalog))
        await runToCompletion(access, statement);
    }
    const tablesMs = step();
    emulator = await startAthenaEmulator({ trino: access, catalog, credentials });
    const settings: AthenaSettings = {
      workgroup: 'primary',
      database: tables[0]!.database,
      table: EVENTS_TABLE,
      sessionsTable: SESSION_FRAGMENTS_TABLE,
      bucketsTable: PAGEVIEW_BUCKETS_TABLE,
      pagesTable: PAGE_BUCKETS_TABLE,
      visitorsTable: VISITOR_DAYS_TABLE,
      customEventsTable: CUSTOM_EVENT_BUCKETS_TABLE,
      resultReuseMinutes: options.resultReuseMinutes ?? 0,
      timeoutMs: options.timeoutMs ?? 25_000,
      location: 'dir' in bucket ? `local://${bucket.dir}` : `s3://${bucket.s3.bucket}`,
      maxConcurrentQueries:
        options.maxConcurrentQueries ?? (trino ? STATEMENTS_PER_HEAP_GIB * (options.heapGiB ?? DEFAULT_HEAP_GIB) : 0),
    };
    // The client the Lambdas build, pointed at the emulator as AWS_ENDPOINT_URL would point it; nothing leaves the machine.
    const client = new AthenaClient({ endpoint: emulator.url, region: 'us-east-1', credentials, maxAttempts: 3 });
    const where = trino ? `Trino on ${trino.url}` : `catalog ${catalog} of Trino on ${access.server}`;
    const how = install
      ? `Trino ${install.provisioned === 'cached' ? 'from the cache' : install.provisioned} (${install.home})`
      : 'a running Trino';
    return {
      // Over a local folder (the store's current link), the snapshot it names is part of the data version.
      engine: new AthenaEngine(settings, {
        client,
        ...('dir' in bucket ? { dataVersion: () => snapshotOf(bucket.dir) } : {}),
      }),
      endpoint: emulator.url,
      location: settings.location!,
      credentials,
      trino: access,
      catalog,
      report:
        `${how} in ${provisionedMs} ms, server up in ${serverMs - provisionedMs} ms, ` +
        `${tables.length} Glue tables created in ${tablesMs - serverMs} ms; Athena emulator on ${emulator.url}, ${where}`,
      close: release,
    };
  } catch (error) {
    await release().catch(() => undefined); // the first error is the one to report
    throw error;
  }
}
