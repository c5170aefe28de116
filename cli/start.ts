import { existsSync, readdirSync } from 'node:fs';
import { engineFromEnv, startLocalApi, type LocalApi } from '../local/server/local-api.js';
import { localPaths } from '../local/store/paths.js';
import { seedDemo } from './demo-seed.js';
import { dashboardLink } from '../local/server/dashboard-page.js';

// `npm start`: the API on http://127.0.0.1:$PORT with the embedded engines, and demo data on first start.

const paths = localPaths();
const firstStart = !existsSync(paths.eventsDir) || readdirSync(paths.eventsDir).length === 0;
const port = Number(process.env.PORT ?? 3000);

// Ctrl-C stops cleanly at any moment, also while the store is brought up to date or the demo is written: every
// change to the store is one transaction (local/store/local-store.ts), so stopping midway leaves it as it was.
const running: { api?: LocalApi } = {};
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping...');
    (running.api?.close() ?? Promise.resolve()).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

// A start that cannot happen (a misspelt setting, a port in use) says why in one line, without a stack.
const api = await Promise.resolve()
  .then(() => startLocalApi({ port, engine: engineFromEnv() }))
  .catch((error: Error) => {
    console.error(`npm start: ${error.message}`);
    process.exit(1);
  });
running.api = api;
void api.compaction.then(
  (partitions) =>
    partitions && console.log(`Store compacted: ${partitions} partitions of many small files rewritten as one each`),
);
if (api.trino) console.log(`Queries run on the Athena engine through ${api.trino.report}`);
console.log(`Analytics API listening on ${api.url} (data in ${paths.dataDir}); reference at ${api.url}/docs`);
if (firstStart && process.env.ANALYTICS_DEMO !== '0') {
  console.log('Writing the demo site: its dashboard link, with a key, follows once it is ready.');
  await seedDemo(api.paths, api.url);
} else {
  console.log(`Dashboard: ${dashboardLink(api.paths, api.url)}`);
  if (firstStart)
    console.log(
      'No events yet: create a key with `npm run keys -- create --domain DOMAIN`, then add the script tag the ' +
        "dashboard's Add your site view gives to your pages, or import events with `npm run import -- FILE.ndjson`.",
    );
}
