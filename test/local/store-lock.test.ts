import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { releaseStoreLock, StoreBusyError, takeStoreLock, thisProcess } from '../../local/store/store-lock.js';
import { collectSnapshots, publish, snapshotLayout } from '../../local/store/snapshots.js';

// The store lock against many processes at once: never two holders, a stale lock taken over by exactly one of
// many, a lock whose pid was reused by an unrelated process known to be stale.

const lockModule = new URL('../../local/store/store-lock.ts', import.meta.url).pathname;

/**
 * `processes` children, each trying `rounds` times to take the lock; inside, each creates `inside` exclusively
 * (failing if another holder is inside), waits a moment, removes it and releases. Returns the takes and overlaps.
 */
async function contend(
  dir: string,
  processes: number,
  rounds: number,
): Promise<{ taken: number; overlaps: number; busy: number }> {
  const script = `
    import { existsSync, rmSync, writeFileSync } from 'node:fs';
    import { takeStoreLock, releaseStoreLock, StoreBusyError } from ${JSON.stringify(lockModule)};
    const [lock, inside, rounds] = process.argv.slice(-3);
    let taken = 0, overlaps = 0, busy = 0;
    const start = Date.now() + 300;
    while (Date.now() < start) {}
    for (let i = 0; i < Number(rounds); i++) {
      let record;
      try { record = takeStoreLock(lock); } catch (e) { if (e instanceof StoreBusyError) { busy++; continue; } throw e; }
      taken++;
      try { writeFileSync(inside, String(process.pid), { flag: 'wx' }); } catch { overlaps++; }
      const until = Date.now() + 1; while (Date.now() < until) {}
      rmSync(inside, { force: true });
      releaseStoreLock(lock, record);
    }
    console.log(JSON.stringify({ taken, overlaps, busy }));`;
  const results = await Promise.all(
    Array.from(
      { length: processes },
      () =>
        new Promise<{ taken: number; overlaps: number; busy: number }>((resolve, reject) => {
          const child = spawn(
            process.execPath,
            [
              '--import',
              'tsx',
              '--input-type=module',
              '-e',
              script,
              join(dir, 'store.lock'),
              join(dir, 'inside'),
              String(rounds),
            ],
            { stdio: ['ignore', 'pipe', 'inherit'] },
          );
          let out = '';
          child.stdout.on('data', (d: Buffer) => (out += d));
          child.on('exit', (code) =>
            code === 0
              ? resolve(JSON.parse(out.trim().split('\n').at(-1)!))
              : reject(new Error(`taker exited ${code}`)),
          );
        }),
    ),
  );
  return results.reduce((a, r) => ({
    taken: a.taken + r.taken,
    overlaps: a.overlaps + r.overlaps,
    busy: a.busy + r.busy,
  }));
}

describe('the store lock', () => {
  it('1,000 takes by 20 processes at once: never two holders inside', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-lock-'));
    const { taken, overlaps, busy } = await contend(dir, 20, 50);
    expect(taken + busy).toBe(1000);
    expect(taken).toBeGreaterThan(0);
    expect(overlaps).toBe(0);
    expect(existsSync(join(dir, 'store.lock'))).toBe(false);
  }, 120_000);

  it('a stale lock (its process gone) is taken over by exactly one of many takers at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-lock-'));
    // A pid no process has (beyond the kernel's default pid_max), as a crashed writer's lock would hold.
    writeFileSync(join(dir, 'store.lock'), JSON.stringify({ pid: 4_194_304 + 7, start: '' }));
    const { taken, overlaps } = await contend(dir, 16, 20);
    expect(taken).toBeGreaterThan(0);
    expect(overlaps).toBe(0);
  }, 120_000);

  it('a lock whose pid now names another process is stale; one whose owner runs is not', () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-lock-'));
    const lock = join(dir, 'store.lock');
    const me = thisProcess();
    expect(me.start).not.toBe('');
    // This process's pid, but started at another time: the pid was reused.
    writeFileSync(lock, JSON.stringify({ pid: me.pid, start: `${me.start}0` }));
    const record = takeStoreLock(lock);
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: me.pid, start: me.start });
    // Held by a running owner (this one): a second taker is refused, and a release by a non-holder changes nothing.
    expect(() => takeStoreLock(lock)).toThrow(StoreBusyError);
    releaseStoreLock(lock, 'someone else');
    expect(existsSync(lock)).toBe(true);
    releaseStoreLock(lock, record);
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over a folder lock left by an earlier version once its process is gone, and not before', () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-lock-'));
    const lock = join(dir, 'store.lock');
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), String(process.ppid));
    expect(() => takeStoreLock(lock)).toThrow(StoreBusyError);
    writeFileSync(join(lock, 'pid'), String(4_194_304 + 9));
    const record = takeStoreLock(lock);
    expect(readFileSync(lock, 'utf8')).toBe(record);
  });

  it('never points current at a missing snapshot, and removes nothing while current names none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-snapshots-'));
    const layout = snapshotLayout(dir);
    const good = join(layout.snapshotsDir, '000001');
    mkdirSync(good, { recursive: true });
    publish(layout, good);
    expect(() => publish(layout, join(layout.snapshotsDir, '000002'))).toThrow(/no such snapshot/);
    // current damaged by hand to name a missing folder: the good snapshot, however old, is kept.
    const older = join(layout.snapshotsDir, '000000');
    mkdirSync(older);
    writeFileSync(join(older, '.retired'), 'x');
    symlinkSync('snapshots/000009', `${layout.currentLink}.x`);
    renameSync(`${layout.currentLink}.x`, layout.currentLink);
    expect(collectSnapshots(layout, Date.now() + 86_400_000)).toBe(0);
    expect(existsSync(good)).toBe(true);
  });
});
