import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_DUCKDB_MEMORY_LIMIT, DuckDbEngine, duckDbMemory } from '../../shared/engines/duckdb-engine.js';
import { openScratchDuckDb } from '../../writer/scratch-duckdb.js';

// DUCKDB_MEMORY_LIMIT bounds the local engine's DuckDB (README, docs/BENCHMARKS.md "Scale: 100M events").

describe("the local engine's memory setting", () => {
  const saved = process.env.DUCKDB_MEMORY_LIMIT;
  afterEach(() => {
    if (saved === undefined) delete process.env.DUCKDB_MEMORY_LIMIT;
    else process.env.DUCKDB_MEMORY_LIMIT = saved;
  });

  it("takes a size in DuckDB's units, spills under the temporary folder, and refuses anything else", () => {
    expect(duckDbMemory({ DUCKDB_MEMORY_LIMIT: '4GB' })).toMatchObject({ memory_limit: '4GB' });
    expect(duckDbMemory({ DUCKDB_MEMORY_LIMIT: ' 1500MiB ' })).toMatchObject({ memory_limit: '1500MiB' });
    expect(duckDbMemory({})).toMatchObject({ memory_limit: DEFAULT_DUCKDB_MEMORY_LIMIT });
    expect(duckDbMemory({ DUCKDB_MEMORY_LIMIT: ' ' })).toMatchObject({ memory_limit: DEFAULT_DUCKDB_MEMORY_LIMIT });
    expect(duckDbMemory({}).temp_directory).toContain(tmpdir());
    expect(duckDbMemory({}, 'scratch').temp_directory).not.toBe(duckDbMemory({}).temp_directory);
    for (const bad of ['4', 'lots', '4GB; SET x = 1', '-1GB'])
      expect(() => duckDbMemory({ DUCKDB_MEMORY_LIMIT: bad })).toThrow(/DUCKDB_MEMORY_LIMIT must be a size/);
  });

  it("is the limit of the engine npm start opens and of the store writers' DuckDB", async () => {
    process.env.DUCKDB_MEMORY_LIMIT = '300MiB';
    const engine = await DuckDbEngine.open(join(mkdtempSync(join(tmpdir(), 'duckdb-memory-')), 'events'));
    const scratch = await openScratchDuckDb();
    try {
      const [row] = await engine.runRaw(`SELECT current_setting('memory_limit') AS m`);
      expect(row!.m).toBe('300.0 MiB');
      const limit = (
        await scratch.connection.runAndReadAll(`SELECT current_setting('memory_limit') AS m`)
      ).getRowObjectsJS()[0];
      expect(limit!.m).toBe('300.0 MiB');
    } finally {
      engine.close();
      scratch.close();
    }
  });

  it("is 2GB by default, not DuckDB's share of the machine", async () => {
    delete process.env.DUCKDB_MEMORY_LIMIT;
    const scratch = await openScratchDuckDb();
    try {
      const [row] = (
        await scratch.connection.runAndReadAll(`SELECT current_setting('memory_limit') AS m`)
      ).getRowObjectsJS();
      expect(row!.m).toBe('1.8 GiB');
    } finally {
      scratch.close();
    }
  });
});
