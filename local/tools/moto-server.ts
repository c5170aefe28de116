import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { freePort, stopProcess, waitUntil } from './local-process.js';
import { provisionPythonTool } from './python-tools.js';

// moto's server mode on 127.0.0.1: a real implementation of S3's HTTP protocol (and of SQS and others) for
// tests of the cloud data path. Its state lives in its memory and ends with it.

export interface MotoServer {
  /** `http://127.0.0.1:<port>`, for the SDK's `endpoint` (with path-style addressing) and for Trino. */
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  stop(): Promise<void>;
  /** What the server wrote on its error stream, requests left out (only with a launcher). */
  log(): string;
}

export interface MotoOptions {
  /**
   * A Python file that starts moto's server in its own way (the tests' launcher that runs Lambda functions without
   * Docker), run by moto's Python with moto's arguments and MOTO_PORT set.
   */
  launcher?: string;
}

export async function startMoto(options: MotoOptions = {}): Promise<MotoServer> {
  const { bin } = provisionPythonTool('moto');
  const port = await freePort();
  const args = ['-H', '127.0.0.1', '-p', String(port)];
  const child = options.launcher
    ? spawn(join(dirname(bin), 'python'), [options.launcher, ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, MOTO_PORT: String(port) },
      })
    : spawn(bin, args, { stdio: 'ignore' });
  // A launcher's functions write their errors here: kept for the caller's failure messages.
  const log: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line && !/HTTP\/1\.1"/.test(line)) log.push(line);
  });
  process.once('exit', () => child.kill('SIGKILL'));
  const endpoint = `http://127.0.0.1:${port}`;
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= stopProcess(child, 5_000));
  try {
    await waitUntil('moto', child, async () => (await fetch(`${endpoint}/moto-api/`)).ok, 60_000);
  } catch (error) {
    await stop();
    if (log.length) (error as Error).message += `\n${log.join('\n')}`;
    throw error;
  }
  return {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'moto', secretAccessKey: 'moto' },
    stop,
    log: () => log.join('\n'),
  };
}
