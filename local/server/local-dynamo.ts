import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { tableNames } from '../../shared/config.js';
import { documentClient, useLocalDynamo } from '../../shared/store/dynamo-client.js';
import { tableDefinitions } from '../../shared/store/table-schemas.js';
import type { LocalPaths } from '../store/paths.js';
import { openSignedDoor, type DoorCredentials } from './signed-dynamo-door.js';

// DynamoDB for local use: dynalite serves the real protocol from ANALYTICS_DATA_DIR. Its files can be opened
// by one process only, so the first process to need them serves them and writes the endpoint to a file;
// `npm run import`, `npm run keys` and further servers then talk to that endpoint.
//
// Only the data folder's owner gets in (docs/SECURITY.md, "Local services"): the folder is made owner-only (0700);
// dynalite listens on a Unix socket in a private folder, and the loopback port is a door that passes on only the
// requests signed with the data folder's own credentials (`dynamodb-credentials.json`, generated once, 0600:
// signed-dynamo-door.ts). The endpoint file is 0600 too.

export interface LocalDynamo {
  endpoint: string;
  /** The data folder's credentials: what a client of this DynamoDB signs with. */
  credentials: DoorCredentials;
  /** True when this process serves the files (and must close them). */
  owner: boolean;
  close(): Promise<void>;
}

export async function openLocalDynamo(paths: LocalPaths, { publish }: { publish: boolean }): Promise<LocalDynamo> {
  ownerOnlyFolder(paths.dataDir);
  const credentials = folderCredentials(paths);
  const running = await runningEndpoint(paths);
  if (running) {
    useLocalDynamo(running, credentials);
    return { endpoint: running, credentials, owner: false, close: async () => {} };
  }
  mkdirSync(paths.dynamoDir, { recursive: true, mode: 0o700 });
  const server = dynalite({ path: paths.dynamoDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  // mkdtemp makes the folder 0700: only this user reaches the socket.
  const socketDir = mkdtempSync(join(tmpdir(), 'analytics-dynamo-'));
  const socket = join(socketDir, 'dynalite.sock');
  let door: Awaited<ReturnType<typeof openSignedDoor>>;
  try {
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(socket, () => resolveListen());
    });
    door = await openSignedDoor(socket, credentials, Number(process.env.DYNAMODB_PORT ?? 0));
  } catch (error) {
    server.close();
    rmSync(socketDir, { recursive: true, force: true });
    throw new Error(`Could not open the local DynamoDB in ${paths.dynamoDir}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const { endpoint } = door;
  if (publish)
    writeOwnerOnly(
      paths.dynamoEndpointFile,
      JSON.stringify({ endpoint, pid: process.pid, dataDir: realpathSync(paths.dataDir) }),
    );
  useLocalDynamo(endpoint, credentials);
  await ensureTables();
  return {
    endpoint,
    credentials,
    owner: true,
    close: async () => {
      if (publish && existsSync(paths.dynamoEndpointFile)) rmSync(paths.dynamoEndpointFile, { force: true });
      await door.close();
      await new Promise<void>((done) => server.close(() => done()));
      rmSync(socketDir, { recursive: true, force: true });
    },
  };
}

/** The data folder, made if missing, readable by its owner only (its files hold every domain's events and keys). */
function ownerOnlyFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/** The data folder's DynamoDB credentials, generated on first use; the file is the owner's only. */
function folderCredentials(paths: LocalPaths): DoorCredentials {
  const file = join(paths.dataDir, 'dynamodb-credentials.json');
  if (!existsSync(file)) {
    const fresh: DoorCredentials = {
      accessKeyId: `LOCAL${randomBytes(8).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(30).toString('base64url'),
    };
    // Written whole to a file of this process, then linked under the name, which fails if it exists: of two
    // processes starting at once one wins and both read its file, and a process killed meanwhile leaves no half file.
    const staging = `${file}.${process.pid}.tmp`;
    writeFileSync(staging, JSON.stringify(fresh), { mode: 0o600 });
    try {
      linkSync(staging, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      rmSync(staging, { force: true });
    }
  }
  let read: Partial<DoorCredentials> | undefined;
  try {
    read = JSON.parse(readFileSync(file, 'utf8')) as Partial<DoorCredentials>;
  } catch {
    // Reported below.
  }
  if (typeof read?.accessKeyId !== 'string' || typeof read.secretAccessKey !== 'string') {
    throw new Error(`${file} is not readable as the local DynamoDB's credentials; delete it to make new ones`);
  }
  return { accessKeyId: read.accessKeyId, secretAccessKey: read.secretAccessKey };
}

/** Writes `file` whole (renamed into place) with mode 0600. */
function writeOwnerOnly(file: string, text: string): void {
  const staging = `${file}.${process.pid}.tmp`;
  writeFileSync(staging, text, { mode: 0o600 });
  renameSync(staging, file);
}

async function ensureTables(): Promise<void> {
  const client = documentClient();
  const existing = new Set((await client.send(new ListTablesCommand({}))).TableNames ?? []);
  for (const definition of tableDefinitions(tableNames())) {
    if (!existing.has(definition.TableName!)) await client.send(new CreateTableCommand(definition));
  }
}

async function runningEndpoint(paths: LocalPaths): Promise<string | null> {
  if (!existsSync(paths.dynamoEndpointFile)) return null;
  try {
    const { endpoint, pid, dataDir } = JSON.parse(readFileSync(paths.dynamoEndpointFile, 'utf8')) as {
      endpoint: string;
      pid: number;
      dataDir?: string;
    };
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
