import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrinoInstall } from '../tools/trino-install.js';

// One Trino server on 127.0.0.1 for this process: a coordinator that also runs the work, with one catalog,
// `hive`, over a file metastore and the local file system (absolute paths, `local:///...`). Its configuration,
// metastore and logs live in a fresh folder that stop() removes; tables are created by the caller.

export interface TrinoServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The metastore's folder: the catalog `hive` keeps its schemas and tables here. */
  metastoreDir: string;
  stop(): Promise<void>;
}

export interface TrinoServerOptions {
  /** The JVM's maximum heap (`-Xmx`); 2G by default. */
  heap?: string;
  /** How long to wait for the server to accept queries. */
  startTimeoutMs?: number;
}

export async function startTrino(install: TrinoInstall, options: TrinoServerOptions = {}): Promise<TrinoServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'analytics-trino-'));
  const metastoreDir = join(dir, 'metastore');
  mkdirSync(join(dir, 'etc', 'catalog'), { recursive: true });
  mkdirSync(metastoreDir);
  const properties = (entries: Record<string, string | number | boolean>) =>
    Object.entries(entries)
      .map(([key, value]) => `${key}=${value}`)
      .join('\n') + '\n';
  writeFileSync(
    join(dir, 'etc', 'config.properties'),
    properties({
      coordinator: true,
      'node-scheduler.include-coordinator': true,
      'http-server.http.port': port,
      'http-server.log.enabled': false,
      'discovery.uri': `http://127.0.0.1:${port}`,
      'node.environment': 'local',
      'node.id': `local-${process.pid}`,
      'node.bind-ip': '127.0.0.1',
      'node.internal-address': '127.0.0.1',
      'query.max-memory': '1GB',
    }),
  );
  writeFileSync(
    join(dir, 'etc', 'catalog', 'hive.properties'),
    properties({
      'connector.name': 'hive',
      'hive.metastore': 'file',
      'hive.metastore.catalog.dir': `local://${metastoreDir}`,
      'fs.native-local.enabled': true,
      'local.location': '/',
      // Athena reads timestamps at millisecond precision, as does Trino's Hive connector by default.
      'hive.timestamp-precision': 'MILLISECONDS',
      // On S3 a projected partition with no objects is an empty listing; a local folder that does not exist is
      // the same thing, not an error.
      'hive.ignore-absent-partitions': true,
    }),
  );
  writeFileSync(join(dir, 'etc', 'log.properties'), properties({ io: 'WARN', 'io.trino.server.TrinoServer': 'INFO' }));

  const log = openSync(join(dir, 'server.log'), 'a');
  const child = spawn(
    install.java,
    [
      `-Xmx${options.heap ?? '2G'}`,
      '-XX:+UseG1GC',
      '-XX:+ExitOnOutOfMemoryError',
      '-Djdk.attach.allowAttachSelf=true',
      // Athena runs every query in UTC.
      '-Duser.timezone=UTC',
      '-Dfile.encoding=UTF-8',
      `-Dconfig=${join(dir, 'etc', 'config.properties')}`,
      `-Dlog.levels-file=${join(dir, 'etc', 'log.properties')}`,
      `-Dcatalog.config-dir=${join(dir, 'etc', 'catalog')}`,
      `-Dplugin.dir=${join(install.home, 'plugin')}`,
      '-cp',
      join(install.home, 'lib', '*'),
      'io.trino.server.TrinoServer',
    ],
    { stdio: ['ignore', log, log] },
  );
  const stopChild = stopper(child, dir);
  process.once('exit', () => child.kill('SIGKILL'));

  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(url, child, options.startTimeoutMs ?? 120_000);
  } catch (error) {
    const tail = readFileSync(join(dir, 'server.log'), 'utf8').split('\n').slice(-20).join('\n');
    await stopChild();
    throw new Error(`${(error as Error).message}\n${tail}`, { cause: error });
  }
  return { url, metastoreDir, stop: stopChild };
}

function stopper(child: ChildProcess, dir: string): () => Promise<void> {
  let stopped: Promise<void> | undefined;
  return () => {
    stopped ??= new Promise<void>((resolve) => {
      const done = () => {
        rmSync(dir, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', done);
      child.kill('SIGTERM');
      // A JVM that does not stop in time is killed; nothing it holds needs a clean shutdown.
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    });
    return stopped;
  };
}

async function waitUntilReady(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Trino exited with code ${child.exitCode} while starting`);
    try {
      const info = (await (await fetch(`${url}/v1/info`)).json()) as { starting?: boolean };
      if (info.starting === false) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`Trino did not start within ${timeoutMs} ms`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
