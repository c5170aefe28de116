import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

// The benches that measure `npm start` itself run the real command in a process group of its own (npm does not pass
// a signal on to the server, so the group is signalled as a whole) and wait until it answers.

export async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  return port;
}

/** Resolves once the server answers on its port (its start-up upkeep done); fails if it stops first. */
export async function listening(child: ChildProcess, port: number): Promise<void> {
  let exited = false;
  child.once('exit', () => (exited = true));
  child.stdout?.resume();
  for (;;) {
    if (exited) throw new Error('npm start stopped before listening');
    const up = await fetch(`http://127.0.0.1:${port}/`).then(
      (res) => res.ok,
      () => false,
    );
    if (up) return;
    await new Promise((done) => setTimeout(done, 250));
  }
}

/** `npm start` in `cwd` with `env` added, in its own process group, stdout not kept. */
export function spawnNpmStart(cwd: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn('npm', ['start'], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
}
