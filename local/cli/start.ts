import { existsSync, readdirSync } from 'node:fs';
import { startLocalApi } from '../server/local-api.js';
import { localPaths } from '../store/paths.js';
import { seedDemo } from './demo-seed.js';

// `npm start`: the API on http://127.0.0.1:$PORT with the embedded engines, and demo data on first start.

const paths = localPaths();
const firstStart = !existsSync(paths.eventsDir) || readdirSync(paths.eventsDir).length === 0;
const port = Number(process.env.PORT ?? 3000);

// A start that cannot happen (a misspelt setting, a port in use) says why in one line, without a stack.
const api = await startLocalApi({ port }).catch((error: Error) => {
  console.error(`npm start: ${error.message}`);
  process.exit(1);
});
console.log(`Analytics API listening on ${api.url} (data in ${paths.dataDir})`);
if (firstStart && process.env.ANALYTICS_DEMO !== '0') {
  await seedDemo(api.paths, api.url);
} else if (firstStart) {
  console.log('No events yet: import some with `npm run import -- FILE.ndjson` and create a key with `npm run keys -- create --domain DOMAIN`.');
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping...');
    api.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
