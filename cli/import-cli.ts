import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { requireAwsTables } from './aws-target.js';
import { s3Destination } from '../ingest/s3-store.js';
import { importNdjson } from '../writer/importer.js';
import type { ImportDestination } from '../writer/destination.js';
import { localDestination } from '../local/store/local-destination.js';
import { openLocalDynamo } from '../local/server/local-dynamo.js';
import { localPaths } from '../local/store/paths.js';
import { terminalSafe } from './terminal-text.js';

// `npm run import -- FILE.ndjson [...]`: imports each file on its own (one file's fatal error leaves the others
// imported), prints what was written and every rejected line as FILE:LINE: reason. Exit 1 when anything was
// rejected or unreadable, 2 on a usage error. With `--s3 s3://bucket/events` the files go to a deployed stack's
// bucket and usage to its counters table (COUNTERS_TABLE) instead of ./.data.

const USAGE = 'usage: npm run import -- [--s3 s3://BUCKET/events] FILE.ndjson [FILE.ndjson ...]';
let args;
try {
  args = parseArgs({
    allowPositionals: true,
    options: { s3: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
} catch (error) {
  console.error(`error: ${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
const files = args.positionals;
if (files.length === 0 || args.values.help) {
  console.error(USAGE);
  process.exit(args.values.help ? 0 : 2);
}

const paths = localPaths();
let failed = false;
let destination: ImportDestination = localDestination(paths);
const dynamo = await (async () => {
  if (args.values.s3 === undefined) return openLocalDynamo(paths, { publish: false });
  requireAwsTables(['COUNTERS_TABLE']);
  // Staged in the data folder's staging area, as local imports are.
  destination = s3Destination(args.values.s3, paths.stagingDir);
  return { close: async () => {} };
})().catch((error: Error) => {
  console.error(`error: ${error.message}`);
  process.exit(1);
});
try {
  for (const file of files) {
    try {
      // npm runs scripts in the package folder; INIT_CWD is where the person typed the command.
      const report = await importNdjson(resolve(process.env.INIT_CWD ?? '.', file), destination, {
        onProgress: progressPrinter(file),
      });
      clearProgress();
      if (report.alreadyImported) {
        console.log(`${terminalSafe(file)}: already imported (same SHA-256 as an earlier import), nothing added`);
        continue;
      }
      for (const { line, reason } of report.rejected)
        console.log(`${terminalSafe(file)}:${line}: ${terminalSafe(reason)}`);
      const perDomain = Object.entries(report.domains)
        .map(([domain, rows]) => `${domain} ${rows}`)
        .join(', ');
      console.log(
        `${terminalSafe(file)}: ${report.rowsWritten} rows written${perDomain ? ` (${perDomain})` : ''}, ${report.rejected.length} rejected`,
      );
      if (report.rejected.length > 0) failed = true;
    } catch (error) {
      clearProgress();
      console.error(`${terminalSafe(file)}: cannot import: ${terminalSafe((error as Error).message)}`);
      failed = true;
    }
  }
} finally {
  await dynamo.close();
}
process.exitCode = failed ? 1 : 0;

/** A self-overwriting progress line, only for a person watching a terminal (never in logs or pipes). */
function progressPrinter(file: string): ((bytesRead: number, totalBytes: number) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  let last = 0;
  return (bytesRead, totalBytes) => {
    const now = Date.now();
    if (now - last < 200) return;
    last = now;
    const percent = totalBytes > 0 ? Math.floor((bytesRead / totalBytes) * 100) : 100;
    process.stderr.write(
      `\r\x1b[K${terminalSafe(basename(file))}: ${percent}% (${mib(bytesRead)} of ${mib(totalBytes)} MiB)`,
    );
  };
}

function clearProgress(): void {
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
