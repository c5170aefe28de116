import { execFileSync, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { request } from 'node:https';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, stopProcess, waitUntil } from '../tools/local-process.js';
import type { TrinoInstall } from '../tools/trino-install.js';
import { hiveCatalogProperties, type S3Endpoint } from './trino-catalog.js';

// One Trino server on 127.0.0.1 for this process: a coordinator that also runs the work, with one catalog,
// `hive`, over a file metastore and the local file system (absolute paths, `local:///...`; trino-catalog.ts). Its
// configuration, metastore and logs live in a fresh folder (mode 0700) that stop() removes; tables are created by the
// caller. With `catalogsByStatement`, clients may add catalogs of their own: the tests run one server for all their
// stores, each in its catalog.
//
// Locked to this process (docs/SECURITY.md): Trino serves HTTPS only, with a certificate made for this run, and
// takes a request only with a JWT signed by an HMAC key made for this run (over plain HTTP Trino would accept any user
// name with no secret at all). Its nodes talk to each other over HTTPS with a shared secret of this run. Another local
// user, or a web page, can reach the port but cannot run a statement.

/** What a client needs to reach the server: its URL, the certificate to trust, and the token to send. */
export interface TrinoAccess {
  /** `https://127.0.0.1:<port>` */
  server: string;
  ssl: { ca: string };
  extraHeaders: { Authorization: string };
  /** The user the token names: a statement must run as it (Trino refuses to act as another). */
  user: string;
}

export interface TrinoServer {
  /** `https://127.0.0.1:<port>` */
  url: string;
  access: TrinoAccess;
  /** The metastore's folder: the catalog `hive` keeps its schemas and tables here. */
  metastoreDir: string;
  stop(): Promise<void>;
}

export interface TrinoServerOptions {
  /**
   * The JVM's maximum heap in GiB (`-Xmx`); 2 by default. A query may take half of it in all (`query.max-memory`) and
   * 30% of it on the node (Trino's default `query.max-memory-per-node`), the limit one node meets first.
   */
  heapGiB?: number;
  /** How long to wait for the server to accept queries. */
  startTimeoutMs?: number;
  /** An S3-compatible server the catalog also reads `s3://` locations from (path-style, as moto serves them). */
  s3?: S3Endpoint;
  /** Whether clients may add catalogs of their own (`CREATE CATALOG`): one server for many stores. */
  catalogsByStatement?: boolean;
}

export const DEFAULT_HEAP_GIB = 2;

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
  const tls = join(dir, 'tls');
  try {
    // -addext needs OpenSSL 1.1.1 or later (Debian's openssl package).
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '7',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        `${tls}-key.pem`,
        '-out',
        `${tls}-cert.pem`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
    );
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(
      `Trino's per-run certificate could not be made with openssl (install Debian's openssl package): ${stderr?.trim() || message}`,
      { cause: error },
    );
  }
  const certificate = readFileSync(`${tls}-cert.pem`, 'utf8');
  writeFileSync(`${tls}.pem`, readFileSync(`${tls}-key.pem`, 'utf8') + certificate, { mode: 0o600 });
  rmSync(`${tls}-key.pem`);
  const jwtKey = randomBytes(32);
  writeFileSync(join(dir, 'jwt.key'), jwtKey.toString('base64'), { mode: 0o600 });
  writeFileSync(
    join(dir, 'etc', 'config.properties'),
    properties({
      coordinator: true,
      'node-scheduler.include-coordinator': true,
      'http-server.http.enabled': false,
      'http-server.https.enabled': true,
      'http-server.https.port': port,
      'http-server.https.keystore.path': `${tls}.pem`,
      'http-server.authentication.type': 'JWT',
      'http-server.authentication.jwt.key-file': join(dir, 'jwt.key'),
      'internal-communication.shared-secret': randomBytes(32).toString('base64'),
      // Nodes find each other over HTTPS; given a keystore, Trino uses it rather than make a certificate of its own.
      'internal-communication.https.required': true,
      'internal-communication.https.keystore.path': `${tls}.pem`,
      'internal-communication.https.truststore.path': `${tls}-cert.pem`,
      'http-server.log.enabled': false,
      'discovery.uri': `https://127.0.0.1:${port}`,
      'node.environment': 'local',
      'node.id': `local-${process.pid}`,
      'node.bind-ip': '127.0.0.1',
      'node.internal-address': '127.0.0.1',
      'query.max-memory': `${(options.heapGiB ?? DEFAULT_HEAP_GIB) * 512}MB`,
      // The file store reads `hive` from the catalog folder, as static management does, and keeps added ones there.
      ...(options.catalogsByStatement ? { 'catalog.management': 'dynamic', 'catalog.store': 'file' } : {}),
    }),
  );
  writeFileSync(
    join(dir, 'etc', 'catalog', 'hive.properties'),
    properties(hiveCatalogProperties(metastoreDir, options.s3)),
  );
  writeFileSync(join(dir, 'etc', 'log.properties'), properties({ io: 'WARN', 'io.trino.server.TrinoServer': 'INFO' }));

  const log = openSync(join(dir, 'server.log'), 'a');
  const child = spawn(
    install.java,
    [
      `-Xmx${(options.heapGiB ?? DEFAULT_HEAP_GIB) * 1024}m`,
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

  const url = `https://127.0.0.1:${port}`;
  const access: TrinoAccess = {
    server: url,
    ssl: { ca: certificate },
    extraHeaders: { Authorization: `Bearer ${hs256Token(jwtKey, TRINO_USER)}` },
    user: TRINO_USER,
  };
  const ready = async () => {
    const info = (await getJson(`${url}/v1/info`, access)) as { starting?: boolean };
    return info.starting === false;
  };
  try {
    await waitUntil('Trino', child, ready, options.startTimeoutMs ?? 120_000);
  } catch (error) {
    const tail = readFileSync(join(dir, 'server.log'), 'utf8').split('\n').slice(-20).join('\n');
    await stopChild();
    throw new Error(`${(error as Error).message}\n${tail}`, { cause: error });
  }
  return { url, access, metastoreDir, stop: stopChild };
}

const TRINO_USER = 'local';

/** A JWT (HS256) for `subject`, signed with `key`: how Trino's JWT authenticator knows this process. */
function hs256Token(key: Buffer, subject: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: subject })}`;
  return `${unsigned}.${createHmac('sha256', key).update(unsigned).digest('base64url')}`;
}

/** GET of a JSON resource of the server over HTTPS (`url` its full URL), trusting only the run's certificate. */
export function getJson(url: string, access: TrinoAccess): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca: access.ssl.ca, headers: access.extraHeaders }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${url}: ${res.statusCode}`));
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (error) {
          reject(error as Error);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
