import fc from 'fast-check';
import { dimensions, metrics, queryFilterFields, revenueMetrics, sortFields } from '../../shared/requests/query.js';
import { filterOperators } from '../../shared/requests/filters.js';
import { journeyFilterFields, visitorSortFields } from '../../shared/requests/journeys.js';
import { presets } from '../../shared/time/date-range.js';

// fast-check arbitraries for request bodies: valid ones (every value allowed by the schemas, as a client who
// read docs/API.md would send them) and near-valid ones built from them (real field names, some values wild).

export const TIME_ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];

/** Strings attackers and unlucky users send: quotes, comments, placeholders, NUL, broken UTF-16, the labels. */
export const hostileStrings = [
  "'",
  '"',
  '`',
  "' OR '1'='1",
  '; DROP TABLE events; --',
  '/* */',
  '#',
  '%',
  '_',
  '\\',
  '${x}',
  '$1',
  '?',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '\uff07',
  '(not set)',
  '(direct)',
  ',',
  ',,',
  ' ',
  'plan:',
  ':pro',
  'x'.repeat(1001),
];

/** Any text: arbitrary code points, printable graphemes, or a hostile string. */
export const anyText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.constantFrom(...hostileStrings) },
);

export const anyJson = fc.jsonValue({ maxDepth: 2 });

/** A value of the wrong kind (or the right kind, wrongly), for a field that expects something else. */
export const wildValue = fc.oneof(anyJson, anyText, fc.constant(undefined), fc.double(), fc.integer());

const nonRevenueMetrics = metrics.filter((m) => !(revenueMetrics as readonly string[]).includes(m));

export function day(min = '2026-01-15', max = '2026-04-15') {
  return fc
    .date({ min: new Date(`${min}T00:00:00Z`), max: new Date(`${max}T00:00:00Z`), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10));
}

export const validDateRange = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom(...presets) },
  { weight: 2, arbitrary: fc.tuple(day(), day()).map(([a, b]) => (a <= b ? [a, b] : [b, a])) },
);

/** Filter values the schema accepts: 1 to 1000 characters, no NUL, no unpaired surrogate. */
export const filterText = fc
  .oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '/',
        '/pricing',
        'US,DE',
        '(not set)',
        '(direct)',
        'google.com',
        "o'k",
        '%',
        '_',
        'a%b_c.pdf',
        'x'.repeat(1000),
        "'".repeat(1000),
      ),
    },
  )
  .filter((v) => !v.includes('\u0000'));

export function validFilter(fields: readonly string[]) {
  return fc
    .tuple(
      fc.constantFrom(...fields),
      fc.constantFrom(...filterOperators),
      filterText,
      filterText.filter((k) => !k.includes(':')),
    )
    .map(
      ([field, operator, value, key]) =>
        [field, operator, field === 'event_property' ? `${key}:${value}` : value] as [string, string, string],
    )
    .filter(
      ([, operator, value]) =>
        !(operator === 'is' || operator === 'is_not') ||
        value
          .replace(/^[^:]*:/, '')
          .split(',')
          .some((v) => v.length > 0),
    )
    .filter(([field, , value]) => field !== 'event_property' || value.length <= 1000);
}

/** POST /v1/query bodies the schema accepts. */
export function validQueryBody(domain?: string) {
  return fc.boolean().chain((includeRevenue) =>
    fc.record(
      {
        ...(domain ? { domain: fc.constant(domain) } : {}),
        metrics: fc.uniqueArray(fc.constantFrom(...(includeRevenue ? metrics : nonRevenueMetrics)), {
          minLength: 1,
          maxLength: 7,
        }),
        date_range: validDateRange,
        dimensions: fc.oneof(
          { weight: 1, arbitrary: fc.constant(['event']) },
          {
            weight: 6,
            arbitrary: fc.uniqueArray(fc.constantFrom(...dimensions.filter((d) => d !== 'event')), { maxLength: 2 }),
          },
        ),
        filters: fc.array(validFilter(queryFilterFields), { maxLength: 3 }),
        sort: fc.record(
          {
            field: fc.constantFrom(...sortFields.filter((f) => includeRevenue || f !== 'revenue')),
            order: fc.constantFrom('asc', 'desc'),
          },
          { requiredKeys: ['field'] },
        ),
        timezone: fc.constantFrom(...TIME_ZONES),
        limit: fc.integer({ min: 1, max: 1000 }),
        offset: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 1_000_000 })),
        include_revenue: fc.constant(includeRevenue),
      },
      { requiredKeys: ['include_revenue'] },
    ),
  );
}

const count = fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 1_000_000 }));

export function validVisitorListBody(domain: string) {
  return fc.record(
    {
      domain: fc.constant(domain),
      date_range: validDateRange,
      filters: fc.array(validFilter(journeyFilterFields), { maxLength: 3 }),
      pageviews_gt: count,
      pageviews_lt: count,
      sessions_gt: count,
      sessions_lt: count,
      revenue_gt: fc.integer({ min: -10_000, max: 10_000 }),
      revenue_lt: fc.integer({ min: -10_000, max: 10_000 }),
      has_revenue: fc.boolean(),
      first_purchase: fc.boolean(),
      sort_by: fc.constantFrom(...visitorSortFields),
      sort_order: fc.constantFrom('asc', 'desc'),
      limit: fc.integer({ min: 1, max: 100 }),
      offset: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 1_000_000 })),
      timezone: fc.constantFrom(...TIME_ZONES),
      is_dev: fc.boolean(),
    },
    { requiredKeys: ['domain'] },
  );
}

export function validTimelineBody(domain: string, visitorIds: readonly string[]) {
  return fc.record(
    {
      domain: fc.constant(domain),
      visitor_id: fc.constantFrom(...visitorIds),
      // Mostly ranges that reach the fixtures' rows, so the timeline is read and not only a 404.
      date_range: fc.oneof(fc.constantFrom('all', '12mo'), validDateRange),
      limit: fc.integer({ min: 1, max: 1000 }),
      offset: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 1_000_000 })),
      timezone: fc.constantFrom(...TIME_ZONES),
      is_dev: fc.boolean(),
      include_auto_events: fc.boolean(),
    },
    { requiredKeys: ['domain', 'visitor_id'] },
  );
}

export function validVisitorBody(domain: string, visitorIds: readonly string[]) {
  return fc.record(
    {
      domain: fc.constant(domain),
      visitor_id: fc.constantFrom(...visitorIds),
      is_dev: fc.boolean(),
      timezone: fc.constantFrom('UTC', 'Asia/Kolkata', 'America/New_York'),
    },
    { requiredKeys: ['domain', 'visitor_id'] },
  );
}

/** A valid body with one or two of its fields replaced by a wild value (or dropped). */
export function withWildFields(valid: fc.Arbitrary<Record<string, unknown>>, fields: readonly string[]) {
  return fc
    .tuple(
      valid,
      fc.uniqueArray(fc.constantFrom(...fields), { minLength: 1, maxLength: 2 }),
      fc.array(wildValue, { minLength: 2, maxLength: 2 }),
    )
    .map(([body, names, values]) => {
      const out: Record<string, unknown> = { ...body };
      names.forEach((name, i) => {
        out[name] = values[i];
      });
      return out;
    });
}

/** Objects whose keys are mostly real field names (and a few traps), each with any JSON value. */
export function objectsWithFields(fields: readonly string[]) {
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...fields) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '', 'domain ', 'Domain'),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  );
  return fc.dictionary(key, anyJson, { maxKeys: 6 });
}

/** Filter lists with real fields and operators mixed with wrong ones, for near-valid bodies. */
export function sloppyFilters(fields: readonly string[]) {
  const part = (values: readonly string[]) =>
    fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...values) }, { weight: 1, arbitrary: wildValue });
  const filter = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(part(fields), part(filterOperators), fc.oneof(anyText, filterText, anyJson)) },
    { weight: 1, arbitrary: fc.array(part([...fields, ...filterOperators]), { maxLength: 4 }) },
    { weight: 1, arbitrary: anyJson },
  );
  return fc.array(filter, { maxLength: 4 });
}

/** Text that is JSON, nearly JSON, or not JSON at all. */
export const rawBodies = fc.oneof(
  fc.json({ maxDepth: 2 }).map((json) => json.slice(0, Math.max(1, json.length - 1))),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.constantFrom(
    '',
    ' ',
    'null',
    '[]',
    '{}',
    '{"domain":',
    '{"a":1}{"b":2}',
    '\ufeff{}',
    '{"limit": 1e400}',
    '{"limit": -0}',
    '{"__proto__": {"include_revenue": true}, "metrics": ["revenue"]}',
    '{"constructor": {"prototype": {"x": 1}}}',
  ),
);
