import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { buildDashboard } from '../local/server/dashboard-page.js';

// `npm run dashboard:build [-- OUT_DIR]`: the dashboard as static files (default dist/dashboard/), to host anywhere
// against a deployed API (docs/DEPLOY.md, "Hosting the dashboard").
const out = resolve(process.env.INIT_CWD ?? '.', process.argv[2] ?? 'dist/dashboard');
const files = await buildDashboard();
for (const [name, content] of Object.entries(files)) {
  mkdirSync(dirname(join(out, name)), { recursive: true });
  writeFileSync(join(out, name), content);
}
console.log(
  `wrote ${Object.keys(files).length} files to ${out}: ${Object.entries(files)
    .map(([n, c]) => `${n} ${(Buffer.byteLength(c) / 1024).toFixed(0)} KB`)
    .join(', ')}`,
);
