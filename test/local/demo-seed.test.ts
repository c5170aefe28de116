import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEMO_DOMAIN, generateDemoEvents, seedDemo } from '../../cli/demo-seed.js';
import { queryParquet, sqlPath } from '../support/parquet-rows.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// The first-start demo: seeded into a running local API exactly as `npm start` does, then read back from the
// Parquet files and used through the printed key.

let api: TestApi;
let printed = '';
let seedMs = 0;

beforeAll(async () => {
  api = await startTestApi();
  const started = Date.now();
  await seedDemo(api.paths, api.url, (text) => (printed += `${text}\n`));
  seedMs = Date.now() - started;
});
afterAll(() => api?.close());

const today = new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.parse(today) - n * 86_400_000).toISOString().slice(0, 10);
const stored = (sql: string) =>
  queryParquet(
    sql.replace(
      'events',
      `read_parquet(${sqlPath(join(api.paths.eventsDir, '*', '*', '*.parquet'))}, hive_partitioning = true)`,
    ),
  );

it('imports at least 50k rows over the 90 days ending today, in a few seconds', async () => {
  const [summary] = await stored(
    `SELECT count(*)::INTEGER AS n, min(dt)::VARCHAR AS first, max(dt)::VARCHAR AS last, count(DISTINCT dt)::INTEGER AS days, max(ts) <= now()::TIMESTAMP AS past FROM events`,
  );
  expect(summary!.n as number).toBeGreaterThanOrEqual(50_000);
  expect(summary).toMatchObject({ first: daysAgo(89), days: 90, past: true });
  expect([daysAgo(1), today]).toContain(summary!.last);
  expect(seedMs).toBeLessThan(20_000); // a few seconds alone; generous for a busy 2-core test run
});

it('holds every row type, returning visitors, bounces, refunds, server-side revenue and dev rows', async () => {
  const [facts] = await stored(
    `SELECT list(DISTINCT type ORDER BY type) AS types,
            list(DISTINCT event_name ORDER BY event_name) FILTER (WHERE type = 'event') AS custom,
            list(DISTINCT event_name ORDER BY event_name) FILTER (WHERE type = 'auto') AS auto,
            list(DISTINCT revenue_event ORDER BY revenue_event) FILTER (WHERE type = 'revenue') AS revenue,
            count(*) FILTER (WHERE amount_cents < 0 AND revenue_event = 'refund')::INTEGER AS refunds,
            count(*) FILTER (WHERE type = 'revenue' AND session_id = '')::INTEGER AS serverside,
            count(*) FILTER (WHERE is_dev)::INTEGER AS dev, count(*)::INTEGER AS total,
            count(DISTINCT referrer_domain)::INTEGER AS referrers, count(*) FILTER (WHERE utm_source IS NOT NULL)::INTEGER AS tagged,
            count(DISTINCT country)::INTEGER AS countries, list(DISTINCT device ORDER BY device) AS devices
     FROM events`,
  );
  expect(facts).toMatchObject({
    types: ['auto', 'event', 'pageview', 'revenue'],
    custom: ['download', 'newsletter_subscribe', 'signup'],
    auto: ['click', 'exit_link', 'form_submit'],
    revenue: ['payment', 'refund', 'subscription'],
    devices: ['desktop', 'mobile', 'tablet', null],
  });
  expect(facts!.refunds as number).toBeGreaterThan(0);
  expect(facts!.serverside as number).toBeGreaterThan(0);
  expect((facts!.dev as number) / (facts!.total as number)).toBeGreaterThan(0.001);
  expect((facts!.dev as number) / (facts!.total as number)).toBeLessThan(0.05);
  expect(facts!.referrers as number).toBeGreaterThanOrEqual(6);
  expect(facts!.tagged as number).toBeGreaterThan(0);
  expect(facts!.countries as number).toBeGreaterThanOrEqual(8);

  const [visits] = await stored(
    `WITH sessions AS (SELECT visitor_id, session_id, count(*) FILTER (WHERE type = 'pageview') AS pageviews FROM events WHERE session_id <> '' GROUP BY ALL),
          visitors AS (SELECT visitor_id, count(*) AS sessions FROM sessions GROUP BY ALL)
     SELECT (SELECT avg((pageviews = 1)::INTEGER) FROM sessions) AS bounce_share,
            (SELECT avg((sessions > 1)::INTEGER) FROM visitors) AS returning_share,
            (SELECT max(pageviews) FROM sessions)::INTEGER AS longest`,
  );
  expect(visits!.bounce_share as number).toBeGreaterThan(0.2);
  expect(visits!.bounce_share as number).toBeLessThan(0.7);
  expect(visits!.returning_share as number).toBeGreaterThan(0.2);
  expect(visits!.longest as number).toBeGreaterThan(3);
});

it('comes from a seeded generator: the same moment gives the same events', () => {
  const now = new Date();
  expect(JSON.stringify(generateDemoEvents(now))).toBe(JSON.stringify(generateDemoEvents(now)));
});

it('prints a demo key once and a curl line that works against the running API', async () => {
  expect(printed).toMatch(/shown only once/);
  const token = /aqk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}/.exec(printed)?.[0];
  expect(token).toBeDefined();
  const curl =
    /curl -s -X POST (\S+) -H "Authorization: Bearer (\S+)" -H 'content-type: application\/json' -d '(.+)'/.exec(
      printed,
    );
  expect(curl?.[1]).toBe(`${api.url}/v1/query`);
  expect(curl?.[2]).toBe(token);

  const annotations = await api.request('GET', '/v1/annotations', { token, query: { domain: DEMO_DOMAIN } });
  expect(annotations.status).toBe(200);
  const res = await api.request('POST', '/v1/query', { token, body: JSON.parse(curl![3]!) });
  expect(res.status).toBe(200);
  expect(res.body.data[0].metrics.visitors).toBeGreaterThan(0);
});
