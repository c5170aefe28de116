import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, stopProcess, waitUntil } from '../tools/local-process.js';
import type { LambdaRuntime } from '../tools/lambda-runtime-install.js';
import type { StackFunction } from './stack-functions.js';

// One function of the stack in a Lambda runtime, as Lambda's Node.js 22 image runs it: AWS's Runtime Interface
// Emulator serves the Runtime API and an invoke endpoint, and starts aws-lambda-ric on Node.js 22 in the bundle's
// folder with the template's environment. Invocations are sent one at a time (a Lambda instance takes one at a
// time); the first starts the runtime (its init duration is reported), and the runtime's peak memory is read from
// the kernel when asked.

export interface RunningFunction {
  fn: StackFunction;
  invoke(event: unknown): Promise<unknown>;
  /** The runtime's init (cold start) in ms, once the first invocation ran. */
  initMs(): number | undefined;
  /** The runtime process's peak resident memory in bytes (VmHWM), while it runs. */
  peakMemoryBytes(): number | undefined;
  /** The last of what the emulator and the function printed. */
  log(): string;
  stop(): Promise<void>;
}

const projectModules = fileURLToPath(new URL('../../node_modules/', import.meta.url));

export async function startFunction(
  fn: StackFunction,
  runtime: LambdaRuntime,
  environment: Record<string, string>,
): Promise<RunningFunction> {
  const port = await freePort();
  const apiPort = await freePort();
  // A bundle with DuckDB beside it carries Lambda's arm64 binding: a copy gets this machine's binding too.
  let taskRoot = fn.asset;
  let copy: string | undefined;
  if (existsSync(join(fn.asset, 'node_modules', '@duckdb')) && process.arch !== 'arm64') {
    copy = mkdtempSync(join(tmpdir(), `lambda-${fn.name}-`));
    cpSync(fn.asset, copy, { recursive: true });
    const binding = `node-bindings-linux-${process.arch}`;
    cpSync(join(projectModules, '@duckdb', binding), join(copy, 'node_modules', '@duckdb', binding), {
      recursive: true,
    });
    taskRoot = copy;
  }
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LAMBDA_TASK_ROOT: taskRoot,
    _HANDLER: fn.handler,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
    AWS_LAMBDA_FUNCTION_TIMEOUT: String(fn.timeoutSeconds),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_REGION: environment.AWS_REGION ?? 'us-east-1',
    AWS_DEFAULT_REGION: environment.AWS_REGION ?? 'us-east-1',
    AWS_LAMBDA_RUNTIME_API: `127.0.0.1:${apiPort}`,
    ...environment,
  };
  let log = '';
  const child: ChildProcess = spawn(
    runtime.rie,
    [
      '--runtime-interface-emulator-address',
      `127.0.0.1:${port}`,
      '--runtime-api-address',
      `127.0.0.1:${apiPort}`,
      runtime.node,
      runtime.ric,
      fn.handler,
    ],
    {
      cwd: taskRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const collect = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-200_000);
    if (process.env.LAMBDA_RUNTIME_LOG) process.stderr.write(`[${fn.name}] ${chunk}`);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const url = `http://127.0.0.1:${port}/2015-03-31/functions/function/invocations`;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= stopProcess(child, 5_000).finally(() => {
      if (copy) rmSync(copy, { recursive: true, force: true });
    }));
  try {
    // The emulator answers once it listens (a GET is refused with 405 or 404, which is enough).
    await waitUntil(
      'aws-lambda-rie',
      child,
      async () => (await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined)) !== undefined,
      30_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  let queue: Promise<unknown> = Promise.resolve();
  const runtimePid = () => {
    try {
      return readdirSync('/proc').find(
        (p) =>
          /^\d+$/.test(p) &&
          readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]?.split(' ')[1] === String(child.pid),
      );
    } catch {
      return undefined;
    }
  };
  return {
    fn,
    invoke: (event) => {
      const run = queue
        .catch(() => {})
        .then(async () => {
          const res = await fetch(url, { method: 'POST', body: JSON.stringify(event) });
          const text = await res.text();
          if (!res.ok) throw new Error(`${fn.name}: the emulator answered ${res.status}: ${text.slice(0, 500)}`);
          const payload = JSON.parse(text) as { errorType?: string; errorMessage?: string };
          if (payload && typeof payload === 'object' && 'errorType' in payload)
            throw new Error(`${fn.name} failed: ${payload.errorType}: ${payload.errorMessage}\n${log.slice(-4000)}`);
          return payload;
        });
      queue = run;
      return run;
    },
    log: () => log,
    initMs: () => {
      const match = /INIT REPORT\(durationMs: ([\d.]+)\)/.exec(log);
      return match ? Number(match[1]) : undefined;
    },
    peakMemoryBytes: () => {
      const pid = runtimePid();
      const kb = pid ? /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] : undefined;
      return kb ? Number(kb) * 1024 : undefined;
    },
    stop,
  };
}
