import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localTarget } from '../../shared/query/sql/target.js';
import { journeyEvents } from '../fixtures/journeys-events.js';
import { everyQuery } from '../support/journeys-sql-cases.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// The DuckDB twins of the journeys statements test/query/journeys-sql.test.ts checks run on real Parquet files of
// the journeys fixture.

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  await api.importEvents(journeyEvents);
});
afterAll(() => api?.close());

describe('every journeys query', () => {
  it.each(everyQuery(localTarget))('%s: DuckDB SQL runs', async (_, query) => {
    await expect(api.engine.run(query)).resolves.toBeDefined();
  });
});
