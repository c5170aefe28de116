import './env.js';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathLiteral } from '../shared/engines/duckdb-engine.js';
import { derivedRelations } from '../shared/events/derived-relations.js';
import { localPaths } from '../local/store/paths.js';
import { eventRowGroupRows } from '../writer/event-file-layout.js';
import { openScratchDuckDb } from '../writer/scratch-duckdb.js';
import { parquetCopyOptions, S3_ZSTD_LEVEL } from '../writer/parquet-codec.js';
import { ensureDataset, rowCount } from './dataset.js';

// `npm run bench:zstd-levels`: what ZSTD's level makes of one day's files of each relation, as the S3 writers write
// them (the bench's ZSTD data set): each file read and written again at every level, in its own row order, with
// the row groups the S3 writers use for event files. Prints each relation's bytes and the time to write it per
// level. Athena bills the compressed bytes it scans; decompressing costs the same at every level.
//   npm run bench:zstd-levels -- [--rows 10M] [--day 2026-11-10]

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000000' },
    day: { type: 'string', default: '2026-11-10' },
  },
});
const levels = [3, 9, 12, 16, 19, 22];
const projectRoot = resolve(import.meta.dirname, '..');
const dataset = await ensureDataset(
  {
    seed: 42,
    rows: rowCount(flags.rows!),
    endDate: '2026-11-20',
    days: 90,
    domain: 'shop.bench.example',
    codec: 'zstd',
  },
  join(projectRoot, '.bench', 'data'),
  (line) => console.error(line),
);
const paths = localPaths(dataset.paths.dataDir);
const folders = [
  ['events', paths.eventsDir] as const,
  ...derivedRelations.map((r) => [r.folder, paths.derivedDirs[r.folder]] as const),
];
const partition = `domain=${dataset.spec.domain}/dt=${flags.day}`;
const scratch = await openScratchDuckDb();
const out = join(projectRoot, '.bench', 'zstd-levels');
mkdirSync(out, { recursive: true });
console.log(`| relation | ${levels.map((l) => `level ${l}`).join(' | ')} |`);
console.log(`|---|${levels.map(() => '---:').join('|')}|`);
try {
  for (const [folder, dir] of folders) {
    const files = readdirSync(join(dir, partition)).filter((f) => f.endsWith('.parquet'));
    const cells: string[] = [];
    for (const level of levels) {
      let bytes = 0;
      let ms = 0;
      for (const file of files) {
        const target = join(out, `${folder}-${level}.parquet`);
        const started = performance.now();
        await scratch.connection.run(
          `COPY (SELECT * FROM read_parquet(${pathLiteral(join(dir, partition, file))}, hive_partitioning = false)) TO ${pathLiteral(target)} ${parquetCopyOptions('zstd', folder === 'events' ? eventRowGroupRows.s3 : undefined, level)}`,
        );
        ms += performance.now() - started;
        bytes += statSync(target).size;
        rmSync(target);
      }
      cells.push(`${(bytes / 1024).toFixed(0)} KiB, ${ms.toFixed(0)} ms${level === S3_ZSTD_LEVEL ? ' (S3)' : ''}`);
    }
    console.log(`| ${folder} | ${cells.join(' | ')} |`);
  }
} finally {
  scratch.close();
}
