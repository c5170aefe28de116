import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, stopProcess, waitUntil } from '../tools/local-process.js';
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
  /** An S3-compatible server the catalog also reads `s3://` locations from (path-style, as moto serves them). */
  s3?: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };
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
      ...(options.s3
        ? {
            'fs.native-s3.enabled': true,
            's3.endpoint': options.s3.endpoint,
            's3.region': options.s3.region,
            's3.path-style-access': true,
            's3.aws-access-key': options.s3.accessKeyId,
            's3.aws-secret-key': options.s3.secretAccessKey,
          }
        : {}),
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
  let stopped: Promise<void> | undefined;
  // A JVM that does not stop in time is killed; nothing it holds needs a clean shutdown.
  const stopChild = () => (stopped ??= stopProcess(child).then(() => rmSync(dir, { recursive: true, force: true })));
  process.once('exit', () => child.kill('SIGKILL'));

  const url = `http://127.0.0.1:${port}`;
  const ready = async () =>
    ((await (await fetch(`${url}/v1/info`)).json()) as { starting?: boolean }).starting === false;
  try {
    await waitUntil('Trino', child, ready, options.startTimeoutMs ?? 120_000);
  } catch (error) {
    const tail = readFileSync(join(dir, 'server.log'), 'utf8').split('\n').slice(-20).join('\n');
    await stopChild();
    throw new Error(`${(error as Error).message}\n${tail}`, { cause: error });
  }
  return { url, metastoreDir, stop: stopChild };
}
