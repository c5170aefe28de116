import fc from 'fast-check';
import { dimensions, metrics, type AnalyticsQuery, type Dimension, type Metric } from '../../shared/requests/query.js';
import type { Filter } from '../../shared/requests/filters.js';
import { rangeOfDates } from '../../shared/time/date-range.js';

// Generated sessions for the tests that compare the derived relations with raw rows (test/query/derived-relations.test.ts,
// test/local/compaction.test.ts): sessions across midnight UTC, attribution changing inside a session, sessions without
// pageviews, events without a path, dev rows, server-side revenue; and random /v1/query requests over them.

export const domain = 'frag.test';
const DAY0 = Date.parse('2026-03-01T00:00:00Z');

/** Deterministic generator (mulberry32), so a failure reproduces. */
export function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function generatedEvents(): unknown[] {
  const rand = random(9);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const events: unknown[] = [];
  // Every row gets its own millisecond, so "the first row" of a session is never a tie.
  const usedMs = new Set<number>();
  const at = (ms: number) => {
    let t = Math.round(ms);
    while (usedMs.has(t)) t += 1;
    usedMs.add(t);
    return new Date(t).toISOString();
  };
  for (let s = 0; s < 400; s++) {
    const visitor = `v${Math.floor(rand() * 90)}`;
    // Starts cluster around midnight UTC so many sessions span two partitions.
    const start =
      DAY0 +
      Math.floor(rand() * 10) * 86_400_000 +
      (rand() < 0.4 ? 86_400_000 - rand() * 1_800_000 : rand() * 86_400_000);
    const rows = 1 + Math.floor(rand() * 6);
    const isDev = rand() < 0.05;
    const noPageviews = rand() < 0.08;
    let t = start;
    for (let r = 0; r < rows; r++) {
      const type = noPageviews
        ? pick(['event', 'auto'] as const)
        : pick(['pageview', 'pageview', 'pageview', 'event', 'auto'] as const);
      const attribution =
        rand() < 0.15
          ? {}
          : {
              referrer: pick([null, 'https://www.google.com/x', 'https://news.ycombinator.com/', 'https://t.co/a']),
              utm_source: pick([null, 'google', 'newsletter']),
              country: pick([null, 'US', 'DE', 'FR']),
              region: pick([null, 'CA', 'BY']),
              city: pick([null, 'Paris', 'Berlin']),
              browser: pick([null, 'Chrome', 'Safari']),
              os: pick([null, 'macOS', 'Linux']),
              device: pick([null, 'desktop', 'mobile']),
            };
      // Custom and auto events may lack a path: here those on /blog (a pageview must have one).
      const path = pick(['/', '/pricing', '/blog', '/docs']);
      const url_path = type !== 'pageview' && path === '/blog' ? undefined : path;
      const base = {
        domain,
        timestamp: at(t),
        visitor_id: visitor,
        session_id: `s${s}`,
        url_path,
        is_dev: isDev,
        ...attribution,
      };
      if (type === 'pageview') events.push({ ...base, type });
      else if (type === 'event')
        events.push({
          ...base,
          type,
          event_name: pick(['signup', 'download']),
          event_properties: { plan: pick(['pro', 'free']) },
        });
      else
        events.push({
          ...base,
          type,
          event_name: 'exit_link',
          event_properties: { url: pick(['https://github.com/x', 'https://example.org']) },
        });
      t += rand() * 1_200_000;
    }
    if (rand() < 0.15) {
      events.push({
        domain,
        timestamp: at(t + 1000),
        type: 'revenue',
        visitor_id: visitor,
        session_id: '',
        url_path: '/checkout',
        transaction_id: `t${s}`,
        amount_cents: 1000,
        currency: 'USD',
        revenue_event: 'payment',
      });
    }
  }
  // Shuffled, so each import holds some rows of many sessions.
  for (let i = events.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [events[i], events[j]] = [events[j]!, events[i]!];
  }
  return events;
}

/** Page filters of every operator, the missing path among the values of some. */
export const pageFilterPool: Filter[] = [
  { field: 'page', operator: 'is', value: '/pricing' },
  { field: 'page', operator: 'is', value: '/docs,(not set)' },
  { field: 'page', operator: 'is', value: '(not set)' },
  { field: 'page', operator: 'is_not', value: '/' },
  { field: 'page', operator: 'is_not', value: '/pricing,(not set)' },
  { field: 'page', operator: 'contains', value: 'o' },
  { field: 'page', operator: 'not_contains', value: 'pric' },
  { field: 'page', operator: 'starts_with', value: '/b' },
];

export const filterPool: Filter[] = [
  { field: 'page', operator: 'is', value: '/pricing' },
  { field: 'page', operator: 'contains', value: 'o' },
  { field: 'country', operator: 'is_not', value: 'US,(not set)' },
  { field: 'referrer', operator: 'is', value: '(direct)' },
  { field: 'browser', operator: 'contains', value: 'Chr' },
  { field: 'event', operator: 'is', value: 'signup' },
  { field: 'event_property', operator: 'is', value: 'plan:pro' },
  { field: 'exit_link', operator: 'starts_with', value: 'https://github' },
];

export const zones = ['UTC', 'America/New_York', 'Asia/Kolkata', 'Europe/Berlin', 'Pacific/Chatham'];
export const days = Array.from({ length: 12 }, (_, i) =>
  new Date(DAY0 + (i - 1) * 86_400_000).toISOString().slice(0, 10),
);

/** A whole-page query of the generated domain. */
export function queryOf(
  metrics: Metric[],
  q: { dimensions: Dimension[]; filters: Filter[]; timeZone: string; range: string[] },
): AnalyticsQuery {
  return {
    domain,
    metrics,
    dimensions: q.dimensions,
    filters: q.filters,
    range: rangeOfDates(q.range[0]!, q.range[1]!, q.timeZone),
    timeZone: q.timeZone,
    sort: null,
    limit: 1000,
    offset: 0,
  };
}

export const queryArbitrary = fc
  .record({
    metrics: fc.subarray([...metrics] as Metric[], { minLength: 1 }),
    session: fc.constantFrom<Metric>('bounce_rate', 'avg_session_duration'),
    dimensions: fc.oneof(
      fc.constant<Dimension[]>([]),
      fc.constant<Dimension[]>(['event']),
      fc.subarray(dimensions.filter((d) => d !== 'event') as Dimension[], { minLength: 1, maxLength: 2 }),
    ),
    filters: fc.subarray(filterPool, { maxLength: 2 }),
    timeZone: fc.constantFrom(...zones),
    range: fc.tuple(fc.constantFrom(...days), fc.constantFrom(...days)).map(([a, b]) => (a <= b ? [a, b] : [b, a])),
  })
  .map((q): AnalyticsQuery => queryOf(q.metrics.includes(q.session) ? q.metrics : [...q.metrics, q.session], q));
