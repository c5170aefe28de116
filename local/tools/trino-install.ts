import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { cacheDir } from '../../infra/tool-cache.js';

// Provisions the pinned Trino server (the engine Athena engine version 3 is built on) into a cache outside the
// repository, from Maven Central, checked against a pinned SHA-1; and finds a Java runtime new enough to run it.
// Only the Hive connector is kept: it is the one reading Parquet through a Glue-like metastore, as Athena does.

export const TRINO_VERSION = '476';
/** SHA-1 of io.trino:trino-server:476:tar.gz as published on Maven Central. */
const TRINO_SHA1 = 'c9b38be4017ebd2f7095455aaac772fb40247ebe';
/** Trino 476 is compiled for Java 24. */
export const TRINO_MIN_JAVA = 24;

export interface TrinoInstall {
  /** The unpacked server: `lib/`, `plugin/hive/`. */
  home: string;
  /** The `java` binary that runs it. */
  java: string;
  /** What had to be done: nothing, an unpack, or a download and an unpack. */
  provisioned: 'cached' | 'unpacked' | 'downloaded';
}

/** The Java runtime for Trino, or why there is none: JAVA_HOME, then the JDKs in /usr/lib/jvm, then `java` on PATH. */
export function findJava(
  env: NodeJS.ProcessEnv = process.env,
): { java: string; version: number } | { missing: string } {
  const candidates: string[] = [];
  if (env.JAVA_HOME) candidates.push(join(env.JAVA_HOME, 'bin', 'java'));
  if (existsSync('/usr/lib/jvm'))
    for (const dir of readdirSync('/usr/lib/jvm').sort().reverse())
      candidates.push(join('/usr/lib/jvm', dir, 'bin', 'java'));
  candidates.push('java');
  const seen: string[] = [];
  for (const java of candidates) {
    const version = javaVersion(java);
    if (version === undefined) continue;
    if (version >= TRINO_MIN_JAVA) return { java, version };
    seen.push(`${java} (${version})`);
  }
  return {
    missing: `Trino ${TRINO_VERSION} needs Java ${TRINO_MIN_JAVA} or newer; found ${seen.length ? seen.join(', ') : 'no Java'}. Set JAVA_HOME to a newer JDK.`,
  };
}

function javaVersion(java: string): number | undefined {
  // `java -version` prints to stderr, e.g. `openjdk version "25.0.1" 2025-10-21`.
  const result = spawnSync(java, ['-version'], { encoding: 'utf8' });
  return result.status === 0 ? parseJavaVersion(`${result.stderr}${result.stdout}`) : undefined;
}

function parseJavaVersion(text: string): number | undefined {
  const match = /version "(\d+)(?:\.(\d+))?/.exec(text);
  if (!match) return undefined;
  // Java 8 and older print "1.8.0_...".
  return match[1] === '1' ? Number(match[2]) : Number(match[1]);
}

/** The server unpacked in the cache, downloading it first when needed. Safe to run from two processes at once. */
export async function provisionTrino(env: NodeJS.ProcessEnv = process.env): Promise<TrinoInstall> {
  const found = findJava(env);
  if ('missing' in found) throw new Error(found.missing);
  const root = cacheDir(env);
  const home = join(root, `trino-server-${TRINO_VERSION}`);
  if (existsSync(join(home, '.complete'))) return { home, java: found.java, provisioned: 'cached' };

  mkdirSync(join(root, 'downloads'), { recursive: true });
  const archive = join(root, 'downloads', `trino-server-${TRINO_VERSION}.tar.gz`);
  let provisioned: TrinoInstall['provisioned'] = 'unpacked';
  if (!existsSync(archive) || (await sha1Of(archive)) !== TRINO_SHA1) {
    const repository = env.MAVEN_REPOSITORY_URL ?? 'https://repo1.maven.org/maven2';
    await download(
      `${repository}/io/trino/trino-server/${TRINO_VERSION}/trino-server-${TRINO_VERSION}.tar.gz`,
      archive,
    );
    provisioned = 'downloaded';
  }

  // Unpacked beside its final place and renamed, so a stopped unpack never leaves a half server that looks whole.
  const unpacking = `${home}.${process.pid}.tmp`;
  rmSync(unpacking, { recursive: true, force: true });
  mkdirSync(unpacking, { recursive: true });
  // The tarball links plugin jars to one another, so it is unpacked whole and the other connectors removed.
  execFileSync('tar', ['-xzf', archive, '-C', unpacking, '--strip-components=1']);
  for (const plugin of readdirSync(join(unpacking, 'plugin'))) {
    if (plugin !== 'hive') rmSync(join(unpacking, 'plugin', plugin), { recursive: true, force: true });
  }
  writeFileSync(join(unpacking, '.complete'), `${TRINO_VERSION}\n`);
  try {
    renameSync(unpacking, home);
  } catch (error) {
    // Another process finished first: its copy is as good as ours.
    rmSync(unpacking, { recursive: true, force: true });
    if (!existsSync(join(home, '.complete'))) throw error;
  }
  // The unpacked server is all that is used; the archive would only take 800 MB more.
  rmSync(archive, { force: true });
  return { home, java: found.java, provisioned };
}

async function download(url: string, file: string): Promise<void> {
  const response = await fetch(url);
  if (!response.ok || !response.body) throw new Error(`could not download ${url}: HTTP ${response.status}`);
  const partial = `${file}.${process.pid}.part`;
  await pipeline(Readable.fromWeb(response.body as never), createWriteStream(partial));
  const sha1 = await sha1Of(partial);
  if (sha1 !== TRINO_SHA1) {
    rmSync(partial, { force: true });
    throw new Error(`${url} has SHA-1 ${sha1}, not the pinned ${TRINO_SHA1}`);
  }
  renameSync(partial, file);
}

async function sha1Of(file: string): Promise<string> {
  const hash = createHash('sha1');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}
