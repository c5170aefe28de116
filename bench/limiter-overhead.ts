import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalDynamo } from '../local/server/local-dynamo.js';
import { localPaths } from '../local/store/paths.js';
import { admitDomainRequest, admitRequest } from '../shared/limits/limiter.js';
import type { Credential } from '../shared/store/credentials-repo.js';

// What the limits add to a request: the rate-limit and usage updates travel together, so their cost is one
// DynamoDB round trip. Measured against dynalite on loopback (`npx tsx bench/limiter-overhead.ts`); on AWS
// the same shape costs one in-region UpdateItem latency.

const dir = mkdtempSync(join(tmpdir(), 'limiter-bench-'));
const dynamo = await openLocalDynamo(localPaths(dir), { publish: false });
const runs = 400;
let series = 0;
// A fresh key every 90 calls keeps each under the rate limit; each series uses its own keys.
const credential = (i: number): Credential => ({
  keyId: `bench${series}${String(Math.floor(i / 90)).padStart(10, '0')}`,
  type: 'project',
  domains: ['bench.test'],
  scopes: [],
  owner: 'bench',
  eventLimit: 1e9,
  createdAt: '',
});

const measure = async (label: string, step: (i: number) => Promise<unknown>) => {
  series++;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await step(i);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.floor(q * (times.length - 1))]!.toFixed(2);
  console.log(`${label.padEnd(44)} p50 ${at(0.5)} ms  p95 ${at(0.95)} ms  (${runs} runs)`);
};

await measure('rate-limit update alone', (i) => admitRequest(credential(i)));
await measure('rate + usage updates together (as served)', (i) =>
  admitDomainRequest(admitRequest(credential(i)), credential(i), 'bench.test'),
);
await measure('rate, then usage, one after the other', async (i) => {
  await admitRequest(credential(i));
  await admitDomainRequest(Promise.resolve(), credential(i), 'bench.test');
});

await dynamo.close();
rmSync(dir, { recursive: true, force: true });
