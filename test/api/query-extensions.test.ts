import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { days, domain, generatedEvents } from '../support/generated-sessions.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// The query extensions (docs/API.md, "Extensions": entry_page, exit_page, week, month, visits) through HTTP,
// against an answer computed here in plain TypeScript from the generated rows (sessions across midnight and across a
// month's end, sessions without pageviews, rows of no session, dev rows): random queries in UTC by one or two of them
// and page, country and date, under row filters. Each is planned as the store allows (buckets, fragments, session
// counts, bitmaps); the Trino differential suite compares the Athena engine with these answers' engine.

interface GeneratedRow {
  domain: string;
  timestamp: string;
  type: 'pageview' | 'event' | 'auto' | 'revenue';
  visitor_id: string;
  session_id: string;
  url_path?: string;
  country?: string | null;
  browser?: string | null;
  is_dev?: boolean;
  amount_cents?: number;
}

const events = generatedEvents() as GeneratedRow[];

type Dim = 'entry_page' | 'exit_page' | 'page' | 'country' | 'date' | 'week' | 'month';
type Met = 'pageviews' | 'visitors' | 'visits' | 'bounce_rate' | 'avg_session_duration' | 'revenue' | 'conversions';
type RowFilter = ['page' | 'country' | 'browser' | 'entry_page' | 'exit_page', 'is' | 'is_not' | 'contains', string];

const filterPool: RowFilter[] = [
  ['page', 'is', '/pricing'],
  ['page', 'is', '/docs,(not set)'],
  ['page', 'is_not', '/pricing,(not set)'],
  ['page', 'contains', 'o'],
  ['country', 'is_not', 'US,(not set)'],
  ['browser', 'contains', 'Chr'],
  ['entry_page', 'is', '/pricing'],
  ['entry_page', 'contains', 'o'],
  ['exit_page', 'is_not', '/,(not set)'],
  ['exit_page', 'is', '(not set)'],
];

const NOT_SET = '(not set)';
const label = (v: string | null | undefined) => (v === null || v === undefined || v === '' ? NOT_SET : v);

/**
 * A filter's meaning (docs/API.md, "Filters"): the label stands for the missing value in is / is_not. `sessionPage`
 * gives a row's session's entry or exit page (the missing label when it has none).
 */
function passes(
  row: GeneratedRow,
  [field, operator, value]: RowFilter,
  sessionPage: (row: GeneratedRow, field: 'entry_page' | 'exit_page') => string,
): boolean {
  const own =
    field === 'entry_page' || field === 'exit_page'
      ? sessionPage(row, field)
      : field === 'page'
        ? row.url_path
        : row[field];
  const missing = own === null || own === undefined || own === '' || own === NOT_SET;
  if (operator === 'contains') return !missing && own.includes(value);
  const listed = value.split(',').includes(missing ? NOT_SET : own);
  return operator === 'is' ? listed : !listed;
}

const dayOf = (row: GeneratedRow) => row.timestamp.slice(0, 10);
/** The first day of a UTC day's week (from Monday) or month, as the week and month dimensions name them. */
const periodOf = (day: string, period: 'week' | 'month') => {
  if (period === 'month') return `${day.slice(0, 8)}01`;
  const ms = Date.parse(`${day}T00:00:00Z`);
  return new Date(ms - ((new Date(ms).getUTCDay() + 6) % 7) * 86_400_000).toISOString().slice(0, 10);
};

interface Session {
  rows: GeneratedRow[];
  kept: boolean;
}

/** The answer to a query, computed from the rows alone: a map from the joined dimension values to the metrics. */
function expectedAnswer(q: { dimensions: Dim[]; metrics: Met[]; filters: RowFilter[]; range: [string, string] }) {
  const inRange = events
    .filter((e) => e.domain === domain && !e.is_dev && dayOf(e) >= q.range[0] && dayOf(e) <= q.range[1])
    .sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  const sessions = new Map<string, Session>();
  for (const row of inRange) {
    if (!row.session_id) continue;
    const s = sessions.get(row.session_id) ?? { rows: [], kept: false };
    s.rows.push(row);
    sessions.set(row.session_id, s);
  }
  const pageviewsOf = (s: Session) => s.rows.filter((r) => r.type === 'pageview');
  const entryOf = (s: Session | undefined) => label(s ? pageviewsOf(s)[0]?.url_path : undefined);
  const exitOf = (s: Session | undefined) => label(s ? pageviewsOf(s).at(-1)?.url_path : undefined);
  const sessionPage = (r: GeneratedRow, field: 'entry_page' | 'exit_page') =>
    (field === 'entry_page' ? entryOf : exitOf)(sessions.get(r.session_id));
  const kept = inRange.filter((r) => q.filters.every((f) => passes(r, f, sessionPage)));
  for (const r of kept) if (r.session_id) sessions.get(r.session_id)!.kept = true;

  const rowKey = (r: GeneratedRow) =>
    q.dimensions
      .map((d) => {
        const s = sessions.get(r.session_id);
        if (d === 'entry_page') return entryOf(s);
        if (d === 'exit_page') return exitOf(s);
        if (d === 'page') return label(r.url_path);
        if (d === 'country') return label(r.country);
        if (d === 'week' || d === 'month') return periodOf(dayOf(r), d);
        return dayOf(r);
      })
      .join('|');
  // A session's own values: where it started (page: its first pageview), its entry and exit pages.
  const sessionKey = (s: Session) =>
    q.dimensions
      .map((d) => {
        if (d === 'entry_page' || d === 'page') return entryOf(s);
        if (d === 'exit_page') return exitOf(s);
        if (d === 'country') return label(s.rows[0]!.country);
        if (d === 'week' || d === 'month') return periodOf(dayOf(s.rows[0]!), d);
        return dayOf(s.rows[0]!);
      })
      .join('|');

  const groups = new Map<string, Record<string, number>>();
  const group = (key: string) => {
    const g = groups.get(key) ?? {};
    groups.set(key, g);
    return g;
  };
  const asks = (...ms: Met[]) => ms.some((m) => q.metrics.includes(m));
  const visitorsBy = new Map<string, Set<string>>();
  const buyersBy = new Map<string, Set<string>>();
  for (const r of kept) {
    const key = rowKey(r);
    if (r.type === 'pageview' && asks('pageviews', 'visitors')) {
      const g = group(key);
      g.pageviews = (g.pageviews ?? 0) + 1;
      visitorsBy.set(key, (visitorsBy.get(key) ?? new Set()).add(r.visitor_id));
    }
    if (r.type === 'revenue' && asks('revenue', 'conversions')) {
      const g = group(key);
      g.revenue = (g.revenue ?? 0) + r.amount_cents!;
      buyersBy.set(key, (buyersBy.get(key) ?? new Set()).add(r.visitor_id));
    }
  }
  const perSession = new Map<string, { visits: number; bounces: number; ms: number }>();
  if (asks('visits', 'bounce_rate', 'avg_session_duration')) {
    for (const s of sessions.values()) {
      if (!s.kept) continue;
      const key = sessionKey(s);
      group(key);
      const t = perSession.get(key) ?? { visits: 0, bounces: 0, ms: 0 };
      t.visits += 1;
      t.bounces += pageviewsOf(s).length === 1 ? 1 : 0;
      t.ms += Date.parse(s.rows.at(-1)!.timestamp) - Date.parse(s.rows[0]!.timestamp);
      perSession.set(key, t);
    }
  }
  const answer = new Map<string, Record<string, number>>();
  for (const [key, g] of groups) {
    const t = perSession.get(key);
    const all: Record<Met, number> = {
      pageviews: g.pageviews ?? 0,
      visitors: visitorsBy.get(key)?.size ?? 0,
      revenue: g.revenue ?? 0,
      conversions: buyersBy.get(key)?.size ?? 0,
      visits: t?.visits ?? 0,
      bounce_rate: t ? (100 * t.bounces) / t.visits : 0,
      avg_session_duration: t ? t.ms / 1000 / t.visits : 0,
    };
    answer.set(key, Object.fromEntries(q.metrics.map((m) => [m, all[m]])));
  }
  return answer;
}

let api: TestApi;
let token: string;
beforeAll(async () => {
  // More calls than the default 100 a minute; read per request, so set for this file only.
  process.env.ANALYTICS_RATE_LIMIT_PER_MINUTE = '1000';
  api = await startTestApi();
  const report = await api.importEvents(events);
  expect(report.rejected).toEqual([]);
  token = (await api.createKey({ domains: [domain] })).token;
});
afterAll(async () => {
  delete process.env.ANALYTICS_RATE_LIMIT_PER_MINUTE;
  await api?.close();
});

const queries = fc.record({
  dimensions: fc.shuffledSubarray<Dim>(['entry_page', 'exit_page', 'page', 'country', 'date', 'week', 'month'], {
    minLength: 1,
    maxLength: 2,
  }),
  metrics: fc.subarray<Met>(
    ['pageviews', 'visitors', 'visits', 'bounce_rate', 'avg_session_duration', 'revenue', 'conversions'],
    { minLength: 1 },
  ),
  filters: fc.subarray(filterPool, { maxLength: 2 }),
  range: fc
    .tuple(fc.constantFrom(...days), fc.constantFrom(...days))
    .map(([a, b]): [string, string] => (a <= b ? [a, b] : [b, a])),
});

describe('entry_page, exit_page, week, month and visits (extensions)', () => {
  it('answer random queries as computed from the rows', async () => {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(queries, async (q) => {
        const res = await api.request('POST', '/v1/query', {
          token,
          body: {
            dimensions: q.dimensions,
            metrics: q.metrics,
            filters: q.filters,
            date_range: q.range,
            include_revenue: true,
            limit: 1000,
          },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const data = res.body.data as { dimensions: Record<string, string>; metrics: Record<string, number> }[];
        const expected = expectedAnswer(q);
        const got = new Map(data.map((row) => [q.dimensions.map((d) => row.dimensions[d]).join('|'), row.metrics]));
        expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
        for (const [key, metrics] of expected) {
          for (const [m, value] of Object.entries(metrics)) {
            // Rates and averages are rounded to 2 decimals by the engine.
            expect(got.get(key)![m], `${key} ${m}`).toBeCloseTo(value, 1);
          }
        }
        compared += data.length;
      }),
      { numRuns: 200, seed: 45 },
    );
    // The runs compared groups, not only empty answers.
    expect(compared).toBeGreaterThan(1000);
  });

  it('sort by visits, ascending and descending, ties by the dimension', async () => {
    for (const order of ['asc', 'desc'] as const) {
      const res = await api.request('POST', '/v1/query', {
        token,
        body: {
          dimensions: ['exit_page'],
          metrics: ['visits'],
          sort: { field: 'visits', order },
          date_range: [days[0], days.at(-1)],
        },
      });
      expect(res.status).toBe(200);
      const rows = (res.body.data as { dimensions: { exit_page: string }; metrics: { visits: number } }[]).map(
        (r) => [r.metrics.visits, r.dimensions.exit_page] as const,
      );
      expect(rows.length).toBeGreaterThan(2);
      const sorted = [...rows].sort(
        (a, b) => (order === 'asc' ? a[0] - b[0] : b[0] - a[0]) || a[1].localeCompare(b[1]),
      );
      expect(rows).toEqual(sorted);
    }
  });
});

describe('30m and minute (extensions): realtime', () => {
  it('30m is the last 30 minutes up to the minute now; minute groups them by the local minute', async () => {
    const live = 'live.test';
    const now = Date.now();
    const ago = (minutes: number) => new Date(now - minutes * 60_000);
    const pageview = (visitor: string, at: Date) => ({
      domain: live,
      timestamp: at.toISOString(),
      type: 'pageview',
      visitor_id: visitor,
      session_id: `s-${visitor}`,
      url_path: '/',
    });
    const report = await api.importEvents([
      pageview('v1', ago(2)),
      pageview('v1', ago(10)),
      pageview('v2', ago(10)),
      pageview('v3', ago(45)),
    ]);
    expect(report.rejected).toEqual([]);
    const key = (await api.createKey({ domains: [live] })).token;
    const ask = async (body: Record<string, unknown>) => {
      const res = await api.request('POST', '/v1/query', {
        token: key,
        body: { domain: live, date_range: '30m', ...body },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    };
    // v3's pageview, 45 minutes ago, is outside.
    expect((await ask({ metrics: ['visitors', 'pageviews'] })).data).toEqual([
      { dimensions: {}, metrics: { visitors: 2, pageviews: 3 } },
    ]);
    // In Asia/Kolkata (UTC+5:30) the minutes are local.
    const local = (at: Date) => {
      const shifted = new Date(Math.floor(at.getTime() / 60_000) * 60_000 + 5.5 * 3_600_000).toISOString();
      return `${shifted.slice(0, 10)} ${shifted.slice(11, 16)}:00`;
    };
    const byMinute = await ask({
      metrics: ['visitors', 'pageviews'],
      dimensions: ['minute'],
      timezone: 'Asia/Kolkata',
    });
    expect(byMinute.data).toEqual([
      { dimensions: { minute: local(ago(10)) }, metrics: { visitors: 2, pageviews: 2 } },
      { dimensions: { minute: local(ago(2)) }, metrics: { visitors: 1, pageviews: 1 } },
    ]);
    expect(byMinute.meta.date_range).toEqual([local(ago(29)).slice(0, 10), local(new Date(now)).slice(0, 10)]);
  });
});
