import { spawn } from 'node:child_process';
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
}

export async function startMoto(): Promise<MotoServer> {
  const { bin } = provisionPythonTool('moto');
  const port = await freePort();
  const child = spawn(bin, ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  process.once('exit', () => child.kill('SIGKILL'));
  const endpoint = `http://127.0.0.1:${port}`;
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= stopProcess(child, 5_000));
  try {
    await waitUntil('moto', child, async () => (await fetch(`${endpoint}/moto-api/`)).ok, 60_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, region: 'us-east-1', credentials: { accessKeyId: 'moto', secretAccessKey: 'moto' }, stop };
}
