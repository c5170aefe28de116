import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

// What every server the project starts on 127.0.0.1 for itself needs: a free port, a wait until it answers,
// and a stop that cannot hang.

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Polls `ready` every 250 ms until it is true; fails when `child` exits first or the time runs out. */
export async function waitUntil(
  name: string,
  child: ChildProcess,
  ready: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode} while starting`);
    if (await ready().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${name} did not start within ${timeoutMs} ms`);
}

/** Stops `child` with SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
export function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), graceMs).unref();
  });
}
