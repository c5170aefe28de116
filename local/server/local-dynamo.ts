import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { tableNames } from '../../shared/config.js';
import { resetDocumentClient } from '../../shared/store/dynamo-client.js';
import { tableDefinitions } from '../../shared/store/table-schemas.js';
import type { LocalPaths } from '../store/paths.js';

// DynamoDB for local use: dynalite serves the real protocol from ANALYTICS_DATA_DIR. Its files can be opened
// by one process only, so the first process to need them serves them on a loopback port and writes the
// endpoint to a file; `npm run import`, `npm run keys` and further servers then talk to that endpoint.

export interface LocalDynamo {
  endpoint: string;
  /** True when this process serves the files (and must close them). */
  owner: boolean;
  close(): Promise<void>;
}

export async function openLocalDynamo(paths: LocalPaths, { publish }: { publish: boolean }): Promise<LocalDynamo> {
  const running = await runningEndpoint(paths);
  if (running) {
    pointSdkAt(running);
    return { endpoint: running, owner: false, close: async () => {} };
  }
  mkdirSync(paths.dynamoDir, { recursive: true });
  const server = dynalite({ path: paths.dynamoDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  try {
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(Number(process.env.DYNAMODB_PORT ?? 0), '127.0.0.1', () => resolveListen());
    });
  } catch (error) {
    throw new Error(`Could not open the local DynamoDB in ${paths.dynamoDir}: ${(error as Error).message}`, { cause: error });
  }
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  if (publish) writeFileSync(paths.dynamoEndpointFile, JSON.stringify({ endpoint, pid: process.pid, dataDir: realpathSync(paths.dataDir) }));
  pointSdkAt(endpoint);
  await ensureTables();
  return {
    endpoint,
    owner: true,
    close: async () => {
      if (publish && existsSync(paths.dynamoEndpointFile)) rmSync(paths.dynamoEndpointFile, { force: true });
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** Points every AWS SDK client of this process at the local endpoint, with dummy credentials. */
export function pointSdkAt(endpoint: string): void {
  process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint;
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  resetDocumentClient();
}

async function ensureTables(): Promise<void> {
  const client = new DynamoDBClient({});
  try {
    const existing = new Set((await client.send(new ListTablesCommand({}))).TableNames ?? []);
    for (const definition of tableDefinitions(tableNames())) {
      if (!existing.has(definition.TableName!)) await client.send(new CreateTableCommand(definition));
    }
  } finally {
    client.destroy();
  }
}

async function runningEndpoint(paths: LocalPaths): Promise<string | null> {
  if (!existsSync(paths.dynamoEndpointFile)) return null;
  try {
    const { endpoint, pid, dataDir } = JSON.parse(readFileSync(paths.dynamoEndpointFile, 'utf8')) as { endpoint: string; pid: number; dataDir?: string };
    // The file of a data folder copied while its server ran names that server: serving another folder, it is not ours.
    if (dataDir !== realpathSync(paths.dataDir)) return null;
    process.kill(pid, 0);
    const url = new URL(endpoint);
    await new Promise<void>((ok, fail) => {
      const socket = createConnection({ host: url.hostname, port: Number(url.port) }, () => {
        socket.end();
        ok();
      });
      socket.once('error', fail);
      socket.setTimeout(1000, () => fail(new Error('timeout')));
    });
    return endpoint;
  } catch {
    return null;
  }
}
