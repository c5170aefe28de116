import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localTarget } from '../../shared/query/sql/target.js';
import { printAnalyticsQuery } from '../../shared/query/analytics/print.js';
import { planAnalyticsQuery } from '../../shared/query/analytics/plan.js';
import { shopEvents } from '../fixtures/shop-events.js';
import { otherQueries, shapes } from '../support/sql-cases.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// The DuckDB twins of the statements test/query/query-sql.test.ts pins run on real Parquet files of the shop fixture.

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  await api.importEvents(shopEvents);
});
afterAll(() => api?.close());

describe.each(shapes)('%s', (_, query) => {
  it('prints DuckDB SQL that runs on the Parquet files', async () => {
    const { rows } = await api.engine.run(
      printAnalyticsQuery(planAnalyticsQuery(query, localTarget.catalog), localTarget),
    );
    expect(Array.isArray(rows)).toBe(true);
  });
});

describe('the other endpoints queries', () => {
  it.each(otherQueries(localTarget))('%s: DuckDB SQL runs', async (_, query) => {
    await expect(api.engine.run(query)).resolves.toBeDefined();
  });
});
