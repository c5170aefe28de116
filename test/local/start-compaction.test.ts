import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startLocalApi } from '../../local/server/local-api.js';
import { COMPACT_FROM_FILES } from '../../local/store/compaction.js';
import { importEvents } from '../../local/store/local-destination.js';
import { domain, generatedEvents } from '../support/generated-sessions.js';
import { filesPerPartition } from '../support/partition-files.js';
import { startTestApi } from '../support/test-api.js';

// `npm start` listens before it compacts (local/server/local-api.ts): compaction changes no answer, so the server
// answers from the current snapshot while it runs, and the same once it is published.

describe('compaction at start', () => {
  it('runs after the server listens, which answers from the current snapshot meanwhile and the same after', async () => {
    const events = generatedEvents().slice(0, 2_000);
    // A store of many small imports, as an hourly feed leaves it when the server stops.
    const dataDir = mkdtempSync(join(tmpdir(), 'analytics-test-'));
    const earlier = await startLocalApi({ dataDir });
    for (let from = 0; from < events.length; from += 100)
      await importEvents(events.slice(from, from + 100), earlier.paths);
    await earlier.close();
    const started = await startTestApi({ dataDir });
    try {
      const { token } = await started.createKey({ domains: [domain], scopes: ['analytics:read'] });
      const query = {
        domain,
        metrics: ['visitors', 'pageviews', 'bounce_rate'],
        dimensions: ['date'],
        date_range: 'all',
      };
      const answer = () => started.request('POST', '/v1/query', { token, body: query });
      // Listening, and the store still as it was: compaction has not been published yet.
      expect(Math.max(...filesPerPartition(started.paths.eventsDir))).toBeGreaterThanOrEqual(COMPACT_FROM_FILES);
      const during = await answer();
      expect(during.status).toBe(200);
      expect(await started.compaction).toBeGreaterThan(0);
      expect(filesPerPartition(started.paths.eventsDir).every((n) => n === 1)).toBe(true);
      expect((await answer()).body.data).toEqual(during.body.data);
    } finally {
      await started.close();
    }
  }, 120_000);
});
