import { basename, resolve } from 'node:path';
import { importNdjson } from './importer.js';
import { openLocalDynamo } from './local-dynamo.js';
import { localPaths } from './paths.js';

// `npm run import -- FILE.ndjson [...]`: imports each file on its own (one file's fatal error leaves the others
// imported), prints what was written and every rejected line as FILE:LINE: reason. Exit 1 when anything was
// rejected or unreadable, 2 on a usage error.

const files = process.argv.slice(2);
if (files.length === 0 || files.some((file) => file === '--help' || file === '-h')) {
  console.error('usage: npm run import -- FILE.ndjson [FILE.ndjson ...]');
  process.exit(files.length === 0 ? 2 : 0);
}

const paths = localPaths();
let failed = false;
const dynamo = await openLocalDynamo(paths, { publish: false }).catch((error: Error) => {
  console.error(`error: ${error.message}`);
  process.exit(1);
});
try {
  for (const file of files) {
    try {
      // npm runs scripts in the package folder; INIT_CWD is where the person typed the command.
      const report = await importNdjson(resolve(process.env.INIT_CWD ?? '.', file), paths, { onProgress: progressPrinter(file) });
      clearProgress();
      for (const { line, reason } of report.rejected) console.log(`${file}:${line}: ${reason}`);
      const perDomain = Object.entries(report.domains).map(([domain, rows]) => `${domain} ${rows}`).join(', ');
      console.log(`${file}: ${report.rowsWritten} rows written${perDomain ? ` (${perDomain})` : ''}, ${report.rejected.length} rejected`);
      if (report.rejected.length > 0) failed = true;
    } catch (error) {
      clearProgress();
      console.error(`${file}: cannot import: ${(error as Error).message}`);
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
    process.stderr.write(`\r\x1b[K${basename(file)}: ${percent}% (${mib(bytesRead)} of ${mib(totalBytes)} MiB)`);
  };
}

function clearProgress(): void {
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
