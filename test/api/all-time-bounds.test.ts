import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueryEngine } from '../../shared/engines/engine.js';
import { installEngine } from '../../shared/engines/registry.js';
import type { SqlQuery } from '../../shared/query/sql/sql.js';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../../shared/config.js';
import { readDomainDays } from '../../shared/store/domain-days-repo.js';
import { documentClient } from '../../shared/store/dynamo-client.js';
import { shopEvents } from '../fixtures/shop-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// Reads over all of a domain's time (a visitor's stats and activity, the `all` preset's first-event lookup, the
// first-purchase check before a range) are bounded by the days the domain's files lie in, recorded by every import
// before it publishes: on Athena, a scan without a `dt` bound projects every day since the stack's start date.

let api: TestApi;
let token: string;
const seen: SqlQuery[] = [];

beforeAll(async () => {
  api = await startTestApi();
  expect((await api.importEvents(shopEvents)).rejected).toEqual([]);
  token = (await api.createKey({ domains: ['shop.test'] })).token;
  const inner = api.engine;
  const recording: QueryEngine = {
    target: inner.target,
    billedPerStatement: inner.billedPerStatement,
    run: async (query) => {
      seen.push(query);
      return inner.run(query);
    },
  };
  installEngine(recording);
});
afterAll(() => api?.close());

/** The statements one request ran. */
async function statementsOf(
  method: string,
  path: string,
  body?: unknown,
  query?: Record<string, string>,
): Promise<SqlQuery[]> {
  seen.length = 0;
  const res = await api.request(method, path, { token, ...(body ? { body } : {}), ...(query ? { query } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
  return [...seen];
}

describe('all-time reads', () => {
  it('an import records the days its files lie in, before publishing, and later imports only widen them', async () => {
    const days = shopEvents.map((e) => e.timestamp.slice(0, 10)).sort();
    expect(await readDomainDays('shop.test')).toEqual({ firstDay: days[0], lastDay: days[days.length - 1] });
    const late = { ...shopEvents[0]!, timestamp: '2026-06-01T12:00:00Z', session_id: 'late' };
    const early = { ...shopEvents[0]!, timestamp: '2025-12-31T23:59:59Z', session_id: 'early' };
    await api.importEvents([late]);
    await api.importEvents([early]);
    expect(await readDomainDays('shop.test')).toEqual({ firstDay: '2025-12-31', lastDay: '2026-06-01' });
    expect(await readDomainDays('never.imported')).toBeUndefined();
  });

  it('a store written before days were recorded: the next import records the days its files already have', async () => {
    await documentClient().send(new DeleteCommand({ TableName: tableNames().counters, Key: { pk: 'days#shop.test' } }));
    await api.importEvents([{ ...shopEvents[0]!, timestamp: '2026-04-01T12:00:00Z', session_id: 'april' }]);
    expect(await readDomainDays('shop.test')).toEqual({ firstDay: '2025-12-31', lastDay: '2026-06-01' });
  });

  it.each([
    ['visitor stats', 'POST', '/v1/journeys/stats', { domain: 'shop.test', visitor_id: 'v1' }],
    ['visitor activity', 'POST', '/v1/journeys/activity', { domain: 'shop.test', visitor_id: 'v1' }],
    [
      'an unknown visitor`s activity (the existence check)',
      'POST',
      '/v1/journeys/activity',
      { domain: 'shop.test', visitor_id: 'nobody' },
    ],
    ['the `all` preset', 'POST', '/v1/query', { domain: 'shop.test', metrics: ['visitors'], date_range: 'all' }],
    [
      'the first-purchase check',
      'POST',
      '/v1/journeys/list',
      { domain: 'shop.test', date_range: ['2026-03-03', '2026-03-03'], first_purchase: true },
    ],
  ] as const)(
    '%s: every statement reads only dt partitions within the domain`s days',
    async (_, method, path, body) => {
      const statements = await statementsOf(method, path, body);
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) {
        // Each read of the events names dt bounds; the all-time ones name the domain's first and last day.
        const reads = statement.sql.split(/\bFROM\s+events\b/).length - 1;
        const bounded = statement.sql.split(/\bFROM\s+events\s+WHERE\s+domain = \?\s+AND\s+dt BETWEEN/).length - 1;
        expect(bounded, statement.sql).toBe(reads);
      }
      const dates = statements.flatMap((s) => s.params.filter((p) => p.type === 'date').map((p) => p.value));
      if (path !== '/v1/journeys/list' || body.first_purchase) expect(dates).toContain('2025-12-31');
    },
  );
});
