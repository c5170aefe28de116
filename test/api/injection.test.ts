import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referrerDomain } from '../../shared/events/event-validation.js';
import { queryFilterFields } from '../../shared/requests/query.js';
import { SHOP_RANGE, shopEvents } from '../fixtures/shop-events.js';
import { expectErrorResponse } from '../support/http-assertions.js';
import { rotatingToken } from '../support/rotating-token.js';
import { startTestApi, type TestApi, type TestResponse } from '../support/test-api.js';

// An injection corpus sent through HTTP into every string input of every endpoint. Each answer is exact: the
// count a plain JavaScript reading of the fixture gives (so `%` and `_` are characters, `' OR '1'='1` matches
// nothing), an empty list, a 404, or a 400 where a documented bound or rule refuses the text; never a 500.
// The store is compared before and after: row counts per domain, the annotation lists and the Parquet files.

const DOMAIN = 'shop.test';
const OTHER = 'other.test';

const corpus: string[] = [
  // quotes and their escapes
  "'",
  '"',
  '`',
  "''",
  "\\'",
  "it's",
  'x"y',
  // comments
  '--',
  '/*',
  '*/',
  '/* x */',
  '#',
  '-- ',
  'a -- b',
  // stacked statements and tautologies
  '; DROP TABLE events; --',
  "'; DROP TABLE events; --",
  '"; DROP TABLE events; --',
  "x'); DROP TABLE events; --",
  "' OR '1'='1",
  "' OR 1=1 --",
  '" OR ""="',
  '1) OR (1=1',
  "' UNION SELECT * FROM events --",
  "/pricing' OR '1'='1",
  // the same quote, spelled otherwise: a JSON escape (arrives as '), the escape text itself, fullwidth and look-alikes
  '\u0027',
  '\\u0027',
  '\uff07',
  '\uff02',
  '\u2019',
  '\u02bc',
  '\\x27',
  // homoglyphs of real values
  '/\u0440ricing',
  'U\u0405',
  'sign\u0443p',
  'Chr\u043eme',
  // backslashes and control characters
  '\\',
  '\\\\',
  'a\\nb',
  '\r\n',
  '\t',
  '\u202e',
  'a\u0000b',
  '\u0000',
  // LIKE wildcards and regex metacharacters: data, never patterns
  '%',
  '_',
  '%%',
  '%pricing%',
  '_ricing',
  'a%b_c.pdf',
  '.*',
  '^/',
  '[a-z]',
  // placeholders and template syntax
  '$1',
  '?',
  '??',
  ':1',
  '@p',
  '${x}',
  '${process.exit(1)}',
  '{{7*7}}',
  '%s',
  // JSON property path tricks
  '$.a',
  '$.plan',
  '$["plan"]',
  "$['plan']",
  'a.b',
  'a"]',
  'plan"]',
  'plan.x',
  '$[0]',
  'plan\\"',
  // comma lists, labels, unicode, lengths
  "US,'",
  ',,',
  '(not set)',
  '(direct)',
  '\ud800',
  '\udfff',
  '😀',
  'x'.repeat(1000),
  'x'.repeat(1001),
  'x'.repeat(5000),
];

/**
 * A cross-section of the corpus, one or two of each kind, for the inputs that share a code path with one that
 * gets the whole corpus: the ten geo, device and UTM row fields compile exactly like `page` and `referrer`
 * (one allow-listed column, one bound value), so the full corpus goes through those two and this set through
 * each of the others. Keeps the file well under a minute on two busy cores.
 */
const coreCorpus: string[] = [
  "'",
  '"',
  '`',
  '/* x */',
  "'; DROP TABLE events; --",
  "' OR '1'='1",
  '\uff07',
  'U\u0405',
  '\\',
  'a\u0000b',
  '%',
  '_',
  '$1',
  '?',
  '$.a',
  "US,'",
  '(not set)',
  '\ud800',
  'x'.repeat(1000),
  'x'.repeat(1001),
];

const hasNul = (s: string) => s.includes('\u0000');
const hasLoneSurrogate = (s: string) => /\p{Surrogate}/u.test(s);
/** What a client could never have sent as valid text: NUL or broken UTF-16 (documented 400s). */
const badText = (s: string) => hasNul(s) || hasLoneSurrogate(s);
const DOMAIN_SHAPE = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;
/** A corpus string as a `domain`: 403 when it is a well-formed domain the key does not hold, else 400. */
const domainStatus = (s: string) => (s.length <= 253 && DOMAIN_SHAPE.test(s) ? 403 : 400);

let api: TestApi;
let nextToken: (uses?: number) => Promise<string>;
let otherToken: string;

// ---- the store, before and after ------------------------------------------------------------------------------

function parquetFiles(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stat = statSync(path);
      if (stat.isDirectory()) walk(path);
      else out[relative(api.paths.eventsDir, path)] = `${stat.size}:${stat.mtimeMs}`;
    }
  };
  walk(api.paths.eventsDir);
  return out;
}

async function storeSnapshot() {
  const counts = async (domain: string, token: string) => {
    const body = {
      domain,
      date_range: 'all',
      metrics: ['pageviews', 'visitors', 'revenue', 'conversions'],
      include_revenue: true,
    };
    const totals = await api.request('POST', '/v1/query', { token, body });
    const events = await api.request('GET', '/v1/events', { token, query: { domain, period: 'all' } });
    const annotations = await api.request('GET', '/v1/annotations', { token, query: { domain } });
    expect([totals.status, events.status, annotations.status]).toEqual([200, 200, 200]);
    return { totals: totals.body.data, events: events.body.data, annotations: annotations.body.data };
  };
  return {
    [DOMAIN]: await counts(DOMAIN, await nextToken(3)),
    [OTHER]: await counts(OTHER, otherToken),
    files: parquetFiles(),
  };
}

let before: Awaited<ReturnType<typeof storeSnapshot>>;

beforeAll(async () => {
  api = await startTestApi();
  expect((await api.importEvents(shopEvents)).rejected).toEqual([]);
  nextToken = rotatingToken(api, { domains: [DOMAIN], owner: 'user_injection' });
  otherToken = (await api.createKey({ domains: [OTHER] })).token;
  const seeded = await api.request('POST', '/v1/annotations', {
    token: await nextToken(),
    body: { domain: DOMAIN, date: '2026-03-02', title: 'Launch' },
  });
  expect(seeded.status).toBe(201);
  before = await storeSnapshot();
  expect(before[DOMAIN].totals[0].metrics.pageviews).toBeGreaterThan(0);
});
afterAll(() => api?.close());

async function send(
  method: string,
  path: string,
  options: { body?: unknown; query?: Record<string, string>; rawBody?: string } = {},
): Promise<TestResponse> {
  const res = await api.request(method, path, { token: await nextToken(), ...options });
  expect(
    res.status,
    `${method} ${path} ${JSON.stringify(options).slice(0, 200)} -> ${JSON.stringify(res.body).slice(0, 200)}`,
  ).toBeLessThan(500);
  if (res.status >= 400) expectErrorResponse(res, res.status);
  return res;
}

/** Runs the checks a few at a time: the server answers concurrently, and the file stays well under a minute. */
async function inParallel<T>(items: readonly T[], check: (item: T) => Promise<void>, width = 6): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(check));
}

const cross = <A, B>(as: readonly A[], bs: readonly B[]): [A, B][] => as.flatMap((a) => bs.map((b): [A, B] => [a, b]));

// ---- an oracle for filters over the fixture, by plain string comparison ---------------------------------------

type Row = (typeof shopEvents)[number] & Record<string, unknown>;
const inScope = (shopEvents as Row[]).filter(
  (r) =>
    r.domain === DOMAIN &&
    !r.is_dev &&
    r.timestamp >= `${SHOP_RANGE[0]}T00:00:00Z` &&
    r.timestamp < '2026-03-04T00:00:00Z',
);
/** A row's session's first or last pageview path in the range (entry_page, exit_page); none without a session. */
const sessionPageOf =
  (last: boolean) =>
  (r: Row): string | null => {
    if (!r.session_id) return null;
    const pageviews = inScope
      .filter((x) => x.session_id === r.session_id && x.type === 'pageview')
      .sort((a, b) => String(a.timestamp).localeCompare(String(b.timestamp)));
    return ((last ? pageviews.at(-1) : pageviews[0])?.url_path as string | undefined) ?? null;
  };

const columnOf: Record<string, (r: Row) => string | null> = {
  page: (r) => (r.url_path as string) ?? null,
  entry_page: sessionPageOf(false),
  exit_page: sessionPageOf(true),
  referrer: (r) => referrerDomain((r.referrer as string | null) ?? undefined) || null,
  ...Object.fromEntries(
    [
      'country',
      'region',
      'city',
      'browser',
      'os',
      'device',
      'utm_source',
      'utm_medium',
      'utm_campaign',
      'utm_content',
      'utm_term',
    ].map((f) => [f, (r: Row) => (r[f] as string) || null]),
  ),
};

/** The filter matching of docs/API.md, for one stored value (null or '' = missing), independently of the SQL. */
function matches(operator: string, stored: string | null, value: string, label: string | null): boolean {
  const missing = stored === null || stored === '';
  if (operator === 'contains') return !missing && stored.includes(value);
  if (operator === 'not_contains') return missing || !stored.includes(value);
  if (operator === 'starts_with') return !missing && stored.startsWith(value);
  const values = value.split(',').filter((v) => v.length > 0);
  const wantsMissing = label !== null && values.includes(label);
  const inList = !missing && values.filter((v) => v !== label).includes(stored);
  if (operator === 'is') return inList || (wantsMissing && missing);
  return wantsMissing ? !missing && !inList : missing || !inList;
}

/** The 400 the filter schema gives, or null when the filter is well-formed. */
function filterRefusal(field: string, operator: string, value: string): boolean {
  if (value.length === 0 || value.length > 1000 || badText(value)) return true;
  const compared = field === 'event_property' ? value.slice(value.indexOf(':') + 1) : value;
  if (field === 'event_property' && value.indexOf(':') <= 0) return true;
  return (operator === 'is' || operator === 'is_not') && compared.split(',').every((v) => v.length === 0);
}

/** Rows of the fixture's range a filter keeps: row filters keep rows; visitor filters keep the sought event rows. */
function rowsPassing(field: string, operator: string, value: string): Row[] {
  if (columnOf[field])
    return inScope.filter((r) =>
      matches(operator, columnOf[field]!(r), value, field === 'referrer' ? '(direct)' : '(not set)'),
    );
  if (field === 'event')
    return inScope.filter((r) => r.type === 'event' && matches(operator, r.event_name as string, value, null));
  if (field === 'event_property') {
    const at = value.indexOf(':');
    const [key, wanted] = [value.slice(0, at), value.slice(at + 1)];
    const props = (r: Row) => (r.event_properties as Record<string, string> | undefined) ?? {};
    return inScope.filter(
      (r) =>
        r.type === 'event' &&
        matches(operator, Object.hasOwn(props(r), key) ? String(props(r)[key]) : null, wanted, null),
    );
  }
  // exit_link
  return inScope.filter(
    (r) =>
      r.type === 'auto' &&
      r.event_name === 'exit_link' &&
      matches(operator, (r.event_properties as { url: string }).url, value, null),
  );
}

function expectedPageviews(field: string, operator: string, value: string): number | 400 {
  if (filterRefusal(field, operator, value)) return 400;
  const passing = rowsPassing(field, operator, value);
  const pageviews = inScope.filter((r) => r.type === 'pageview');
  if (columnOf[field]) return passing.filter((r) => r.type === 'pageview').length;
  const visitors = new Set(passing.map((r) => r.visitor_id));
  return pageviews.filter((r) => visitors.has(r.visitor_id)).length;
}

function expectedVisitors(field: string, operator: string, value: string): number | 400 {
  if (filterRefusal(field, operator, value)) return 400;
  return new Set(rowsPassing(field, operator, value).map((r) => r.visitor_id)).size;
}

// ---- POST /v1/query ----------------------------------------------------------------------------------------------

async function queryPageviews(body: Record<string, unknown>): Promise<number | 400 | 403> {
  const res = await send('POST', '/v1/query', {
    body: { metrics: ['pageviews'], date_range: [...SHOP_RANGE], ...body },
  });
  if (res.status !== 200) return res.status as 400 | 403;
  return res.body.data[0].metrics.pageviews;
}

describe('POST /v1/query', () => {
  it('the oracle agrees with hand-computed counts of the fixture', () => {
    expect(expectedPageviews('page', 'is', '/pricing')).toBe(2);
    expect(expectedPageviews('event_property', 'contains', 'file:%')).toBe(3); // v3's three pageviews
    expect(expectedPageviews('page', 'contains', '%')).toBe(0);
    expect(expectedPageviews('country', 'is_not', "' OR '1'='1")).toBe(8);
  });

  // The whole corpus through one field of each kind (a plain column, the `(direct)`-labelled referrer, the two
  // visitor filters), the cross-section through every other row field.
  const fullCorpusFields = new Set(['page', 'referrer', 'event', 'exit_link']);

  it.each(queryFilterFields.filter((f) => f !== 'event_property'))(
    'filter values of %s: exact counts for is, contains, is_not',
    async (field) => {
      const texts = fullCorpusFields.has(field) ? corpus : coreCorpus;
      await inParallel(cross(texts, ['is', 'contains', 'is_not']), async ([value, operator]) => {
        expect(
          await queryPageviews({ filters: [[field, operator, value]] }),
          `${field} ${operator} ${JSON.stringify(value)}`,
        ).toBe(expectedPageviews(field, operator, value));
      });
    },
  );

  it('event_property: the corpus as the key and as the value, exact counts', async () => {
    const cases = corpus.flatMap((text): [string, string][] => [
      [`${text}:pro`, 'is'],
      [`plan:${text}`, 'is'],
      [`file:${text}`, 'contains'],
    ]);
    await inParallel(cases, async ([value, operator]) => {
      expect(
        await queryPageviews({ filters: [['event_property', operator, value]] }),
        `${operator} ${JSON.stringify(value)}`,
      ).toBe(expectedPageviews('event_property', operator, value));
    });
  });

  it('domain: a 400, or a 403 when the text is a well-formed domain of someone else', async () => {
    for (const value of corpus)
      expect(await queryPageviews({ domain: value }), JSON.stringify(value)).toBe(domainStatus(value));
  });

  // Inputs checked against an enum, a pattern or a calendar take the cross-section of the corpus; free text (filter
  // values, domains, path parameters, visitor ids, titles) takes all of it.
  it('timezone: a 400 for every corpus string', async () => {
    for (const value of coreCorpus) expect(await queryPageviews({ timezone: value }), JSON.stringify(value)).toBe(400);
  });

  it('field names, metric names, dimensions and sort fields from the corpus: a 400, never an identifier in the SQL', async () => {
    for (const value of coreCorpus) {
      const context = JSON.stringify(value);
      expect(await queryPageviews({ filters: [[value, 'is', 'x']] }), context).toBe(400);
      expect(await queryPageviews({ filters: [['page', value, 'x']] }), context).toBe(400);
      expect(await queryPageviews({ metrics: [value] }), context).toBe(400);
      expect(await queryPageviews({ dimensions: [value] }), context).toBe(400);
      expect(await queryPageviews({ sort: { field: value } }), context).toBe(400);
      expect(await queryPageviews({ [value]: 1 }), context).toBe(400);
    }
  });

  it('a prototype-pollution body is refused and pollutes nothing in the server process', async () => {
    const raw =
      '{"__proto__": {"include_revenue": true, "polluted": 1}, "constructor": {"prototype": {"polluted": 1}}, "metrics": ["revenue"]}';
    const res = await send('POST', '/v1/query', { rawBody: raw });
    expect(res.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).include_revenue).toBeUndefined();
  });

  it('the documented length bounds: 1000 characters answer exactly, 1001 are a 400, a body over 1 MiB a 413', async () => {
    expect(await queryPageviews({ filters: [['page', 'contains', '/'.repeat(1000)]] })).toBe(0);
    expect(await queryPageviews({ filters: [['page', 'is', 'x'.repeat(1001)]] })).toBe(400);
    expect(await queryPageviews({ filters: Array.from({ length: 21 }, () => ['page', 'is', '/']) })).toBe(400);
    const huge = await send('POST', '/v1/query', {
      rawBody: JSON.stringify({ filters: [['page', 'is', 'x'.repeat(1024 * 1024)]] }),
    });
    expect(huge.status).toBe(413);
  });
});

// ---- GET /v1/events... ------------------------------------------------------------------------------------------

const pathable = corpus.filter((s) => !hasLoneSurrogate(s)); // encodeURIComponent cannot spell an unpaired surrogate
const pathStatus = (s: string) => (hasNul(s) || s.length > 512 ? 400 : 200);
const window = { start: SHOP_RANGE[0], end: SHOP_RANGE[1] };

describe('GET /v1/events, /properties, /properties/:key', () => {
  it('an event name from the corpus: an empty list (no such event) or a 400', async () => {
    await inParallel(cross(pathable, ['/properties', '/properties/plan']), async ([name, suffix]) => {
      const context = `${suffix} ${JSON.stringify(name)}`;
      const res = await send('GET', `/v1/events/${encodeURIComponent(name)}${suffix}`, { query: window });
      expect(res.status, context).toBe(pathStatus(name));
      if (res.status === 200) {
        expect(res.body.data, context).toEqual([]);
        expect(res.body.meta.event, context).toBe(name);
      }
    });
  });

  it('a property key from the corpus (JSON path tricks included) never reads another key: an empty list or a 400', async () => {
    for (const key of pathable) {
      const res = await send('GET', `/v1/events/signup/properties/${encodeURIComponent(key)}`, {
        query: { ...window, include_revenue: 'true' },
      });
      expect(res.status, JSON.stringify(key)).toBe(pathStatus(key));
      if (res.status === 200) {
        expect(res.body.data, JSON.stringify(key)).toEqual([]);
        expect(res.body.meta.property).toBe(key);
      }
    }
    // The real key still answers, so the empty lists above are not an accident of the range.
    const plan = await send('GET', '/v1/events/signup/properties/plan', { query: window });
    expect(plan.body.data.map((d: { value: string }) => d.value)).toEqual(['free', 'pro']);
  });

  it('domain, period, start, end, limit and include_revenue from the corpus: 400 (or 403 for a foreign domain)', async () => {
    for (const value of corpus)
      expect((await send('GET', '/v1/events', { query: { domain: value } })).status, JSON.stringify(value)).toBe(
        domainStatus(value),
      );
    for (const value of coreCorpus) {
      const context = JSON.stringify(value);
      expect((await send('GET', '/v1/events', { query: { period: value } })).status, context).toBe(400);
      expect((await send('GET', '/v1/events', { query: { start: value, end: SHOP_RANGE[1] } })).status, context).toBe(
        400,
      );
      expect(
        (await send('GET', '/v1/events/signup/properties', { query: { start: SHOP_RANGE[0], end: value } })).status,
        context,
      ).toBe(400);
      expect((await send('GET', '/v1/events', { query: { limit: value } })).status, context).toBe(400);
      expect(
        (await send('GET', '/v1/events/signup/properties/plan', { query: { include_revenue: value } })).status,
        context,
      ).toBe(400);
    }
  });
});

// ---- POST /v1/journeys/... ----------------------------------------------------------------------------------------

describe('POST /v1/journeys/*', () => {
  it('visitor_id from the corpus: a 404 (no such visitor) or a 400 past 256 characters or with NUL / broken UTF-16', async () => {
    const cases = [
      ...cross(corpus, ['/v1/journeys/timeline']),
      ...cross(coreCorpus, ['/v1/journeys/stats', '/v1/journeys/activity']),
    ];
    await inParallel(cases, async ([visitor, path]) => {
      const res = await send('POST', path, { body: { domain: DOMAIN, visitor_id: visitor } });
      expect(res.status, `${path} ${JSON.stringify(visitor)}`).toBe(
        visitor.length > 256 || badText(visitor) ? 400 : 404,
      );
    });
  });

  it.each([
    ['page', corpus, ['is', 'contains']],
    ['event', corpus, ['is']],
    ['country', coreCorpus, ['is', 'contains']],
    ['utm_source', coreCorpus, ['is', 'contains']],
  ] as const)('list filter values of %s: the exact number of visitors', async (field, texts, operators) => {
    await inParallel(cross(texts, operators), async ([value, operator]) => {
      const res = await send('POST', '/v1/journeys/list', {
        body: { domain: DOMAIN, date_range: [...SHOP_RANGE], filters: [[field, operator, value]] },
      });
      const want = expectedVisitors(field, operator, value);
      expect(
        res.status === 200 ? res.body.pagination.total : res.status,
        `${field} ${operator} ${JSON.stringify(value)}`,
      ).toBe(want);
    });
  });

  it('list event_property keys and values from the corpus: the exact number of visitors', async () => {
    const values = [...corpus.map((text) => `file:${text}`), ...coreCorpus.map((text) => `${text}:pro`)];
    await inParallel(values, async (value) => {
      const res = await send('POST', '/v1/journeys/list', {
        body: { domain: DOMAIN, date_range: [...SHOP_RANGE], filters: [['event_property', 'contains', value]] },
      });
      expect(res.status === 200 ? res.body.pagination.total : res.status, JSON.stringify(value)).toBe(
        expectedVisitors('event_property', 'contains', value),
      );
    });
  });

  it('sort_by, sort_order, timezone and domain from the corpus: 400 (or 403 for a foreign domain)', async () => {
    const list = (body: Record<string, unknown>) =>
      send('POST', '/v1/journeys/list', { body: { domain: DOMAIN, ...body } });
    for (const value of corpus)
      expect((await list({ domain: value })).status, JSON.stringify(value)).toBe(domainStatus(value));
    for (const value of coreCorpus) {
      const context = JSON.stringify(value);
      expect((await list({ sort_by: value })).status, context).toBe(400);
      expect((await list({ sort_order: value })).status, context).toBe(400);
      expect((await list({ timezone: value })).status, context).toBe(400);
      expect(
        (await send('POST', '/v1/journeys/timeline', { body: { domain: DOMAIN, visitor_id: 'v1', timezone: value } }))
          .status,
        context,
      ).toBe(400);
    }
  });
});

// ---- annotations ----------------------------------------------------------------------------------------------

describe('annotations', () => {
  it('a title from the corpus is stored and read back exactly (then deleted), or refused with a 400', async () => {
    for (const title of corpus) {
      const trimmed = title.trim();
      const refused = badText(title) || trimmed.length === 0 || [...trimmed].length > 250;
      const created = await send('POST', '/v1/annotations', { body: { domain: DOMAIN, date: '2026-03-03', title } });
      expect(created.status, JSON.stringify(title)).toBe(refused ? 400 : 201);
      if (refused) continue;
      expect(created.body.title).toBe(trimmed);
      const listed = await send('GET', '/v1/annotations', {
        query: { domain: DOMAIN, start_date: '2026-03-03', end_date: '2026-03-03' },
      });
      expect(listed.body.data.map((a: { title: string }) => a.title)).toEqual([trimmed]);
      expect((await send('DELETE', `/v1/annotations/${created.body.id}`, { query: { domain: DOMAIN } })).status).toBe(
        200,
      );
    }
  });

  it('date, domain, start_date and end_date from the corpus: 400 (or 403 for a foreign domain)', async () => {
    for (const value of corpus) {
      const context = JSON.stringify(value);
      expect(
        (await send('POST', '/v1/annotations', { body: { domain: value, date: '2026-03-03', title: 'x' } })).status,
        context,
      ).toBe(domainStatus(value));
      expect((await send('GET', '/v1/annotations', { query: { domain: value } })).status, context).toBe(
        domainStatus(value),
      );
    }
    for (const value of coreCorpus) {
      const context = JSON.stringify(value);
      expect(
        (await send('POST', '/v1/annotations', { body: { domain: DOMAIN, date: value, title: 'x' } })).status,
        context,
      ).toBe(400);
      expect(
        (await send('GET', '/v1/annotations', { query: { domain: DOMAIN, start_date: value } })).status,
        context,
      ).toBe(400);
      expect(
        (await send('GET', '/v1/annotations', { query: { domain: DOMAIN, end_date: value } })).status,
        context,
      ).toBe(400);
    }
  });

  it('an id from the corpus deletes nothing: a 404, or a 400 past 512 characters or with NUL', async () => {
    for (const id of pathable) {
      const res = await send('DELETE', `/v1/annotations/${encodeURIComponent(id)}`, { query: { domain: DOMAIN } });
      expect(res.status, JSON.stringify(id)).toBe(hasNul(id) || id.length > 512 ? 400 : 404);
    }
  });
});

// Runs last: vitest runs a file's tests in order.
describe('after the whole corpus', () => {
  it('the store is unchanged: row counts and events per domain, annotation lists, the Parquet files', async () => {
    expect(await storeSnapshot()).toEqual(before);
  });
});
