import { mkdirSync, mkdtempSync, renameSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDbEngine } from '../../shared/engines/duckdb-engine.js';
import type { SqlQuery } from '../../shared/query/sql/sql.js';

// The local engine keeps its connections and their prepared statements between queries
// (shared/engines/duckdb-connections.ts): a statement's text repeats while its values change, and a store's
// snapshot changes under it. Both must read what a freshly prepared statement would.

const root = mkdtempSync(join(tmpdir(), 'duckdb-statements-'));

/** A snapshot whose events are `rows` rows per day of `days`, for one domain. */
async function writeSnapshot(name: string, days: Record<string, number>): Promise<void> {
  mkdirSync(join(root, 'snapshots', name, 'events'), { recursive: true });
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  for (const [day, rows] of Object.entries(days)) {
    const dir = join(root, 'snapshots', name, 'events', 'domain=a.example', `dt=${day}`);
    mkdirSync(dir, { recursive: true });
    await connection.run(
      `COPY (SELECT range AS n FROM range(${rows})) TO '${join(dir, 'part.parquet')}' (FORMAT parquet)`,
    );
  }
  connection.closeSync();
  instance.closeSync();
}

/** Points `current` at a snapshot with one rename, as the store publishes. */
function publish(name: string): void {
  const link = join(root, `current-${name}`);
  symlinkSync(join(root, 'snapshots', name), link);
  renameSync(link, join(root, 'current'));
}

const countOn = (day: string): SqlQuery => ({
  sql: 'SELECT count(*) AS n FROM events WHERE domain = ? AND dt = ?',
  params: [
    { type: 'string', value: 'a.example' },
    { type: 'date', value: day },
  ],
});

describe("the local engine's kept statements", () => {
  let engine: DuckDbEngine;
  const count = async (day: string) => Number((await engine.run(countOn(day))).rows[0]!.n);

  beforeAll(async () => {
    await writeSnapshot('0', {});
    await writeSnapshot('1', { '2026-01-01': 1, '2026-01-02': 2 });
    await writeSnapshot('2', { '2026-01-01': 3, '2026-01-02': 4, '2026-01-03': 5 });
    publish('0');
    engine = await DuckDbEngine.open(join(root, 'current', 'events'));
  });
  afterAll(() => engine.close());

  it('read the first files of a store that had none when they were prepared', async () => {
    // Over no files a view is a constant empty relation, which DuckDB does not bind again by itself.
    expect(await count('2026-01-01')).toBe(0);
    publish('1');
    expect(await count('2026-01-01')).toBe(1);
  });

  it('answer for the values they run with, not those they were first prepared with', async () => {
    expect(await count('2026-01-01')).toBe(1);
    expect(await count('2026-01-02')).toBe(2);
    expect(await count('2026-01-03')).toBe(0);
    // Overlapping queries take connections of their own, each preparing the text once.
    const days = Array.from({ length: 24 }, (_, i) => `2026-01-0${(i % 3) + 1}`);
    expect(await Promise.all(days.map(count))).toEqual(
      days.map((d) => ({ '2026-01-01': 1, '2026-01-02': 2, '2026-01-03': 0 })[d]),
    );
  });

  it('read the snapshot published after they were prepared', async () => {
    const all = async () =>
      Number((await engine.run({ sql: 'SELECT count(*) AS n FROM events', params: [] })).rows[0]!.n);
    expect([await count('2026-01-01'), await all()]).toEqual([1, 3]);
    publish('2');
    expect([await count('2026-01-01'), await all()]).toEqual([3, 12]);
    expect(await count('2026-01-03')).toBe(5);
    publish('1');
    expect([await count('2026-01-03'), await all()]).toEqual([0, 3]);
  });

  it('leave no connection broken by a failed query', async () => {
    await expect(engine.run({ sql: 'SELECT * FROM no_such_table', params: [] })).rejects.toThrow();
    await expect(
      engine.run({
        sql: 'SELECT count(*) AS n FROM events WHERE dt = ?',
        params: [{ type: 'string', value: 'not a date' }],
      }),
    ).rejects.toThrow();
    expect(await count('2026-01-02')).toBe(2);
  });
});
