import type { ParquetCodec } from '../writer/parquet-codec.js';
// A deterministic, lifelike event stream for one site: NDJSON lines in the import format (docs/EVENT-FORMAT.md), day by day
// over the window, so the importer's batches each cover a short stretch of time (few files per partition).
//
// Visitors come back across sessions (a visitor's return days are scheduled when a session ends), sessions hold
// 1..N pageviews (about 40% bounce), traffic comes from referrers and UTM-tagged campaigns, grows over the
// window and dips at weekends. Sessions carry custom events with properties (signup, download, ...), auto events
// (click, form_submit, exit_link) and, for buyers, a checkout with a payment, monthly renewals sent server-side
// (no session) and now and then a refund. About 1% of visitors are dev traffic (is_dev).
// Same spec, same lines: every random choice comes from seeded generators, never from Math.random or the clock.
// A shape (`GeneratorSpec.shape`) changes how many pages, visitors and sessions the rows spread over; without one
// the lines are those of the default shape, unchanged.

import { seededRandom, type Weighted } from '../cli/seeded-random.js';

export interface GeneratorSpec {
  seed: number;
  rows: number;
  /** Last UTC day of the window, `YYYY-MM-DD`. */
  endDate: string;
  days: number;
  domain: string;
  /** How the rows spread over pages, visitors and sessions; the default shape when absent. */
  shape?: GeneratorShape;
  /** One codec for every file of the store (as ANALYTICS_PARQUET_COMPRESSION sets it); the local defaults when absent. */
  codec?: ParquetCodec;
}

export interface GeneratorShape {
  /** Blog posts: the 8 named ones, then `/blog/post-<n>` (each post also links 3 others when there are more than 8). */
  blogPosts: number;
  /** Chance a session leads to a return visit; null: each visitor's own loyalty (15%, 45% or 75%). */
  returnChance: number | null;
  /** A non-bounce session has 2 + a geometric number of further pageviews: stop chance per pageview, and the cap. */
  pageviewStop: number;
  maxExtraPageviews: number;
  /** At most this many distinct visitors; once all exist, new sessions come from earlier visitors. Null: no bound. */
  visitors: number | null;
}

export const defaultShape: GeneratorShape = {
  blogPosts: 8,
  returnChance: null,
  pageviewStop: 0.3,
  maxExtraPageviews: 18,
  visitors: null,
};

/**
 * Named shapes for `rows` events. `wide`: hundreds of pages, long sessions and many returning visitors, about a
 * visitor per 12 events and four events per session (the distributions of another generator's data set).
 */
export function namedShape(name: string, rows: number): GeneratorShape {
  if (name === 'default') return defaultShape;
  if (name === 'wide')
    return {
      blogPosts: 300,
      returnChance: 0.65,
      pageviewStop: 0.22,
      maxExtraPageviews: 60,
      visitors: Math.max(1, Math.round(rows / 12)),
    };
  throw new Error(`unknown shape "${name}" (default, wide)`);
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

type Row = Record<string, string | number | boolean | Record<string, string | number | boolean>>;

/** A 32-bit mix of two integers (visitor ids, per-visitor seeds). */
function hash(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const hex = (n: number) => n.toString(16).padStart(8, '0');

interface Place {
  country: string;
  region: string | null;
  city: string | null;
  utcOffset: number;
  currency: string;
}
const places: Weighted<Place> = [
  [{ country: 'US', region: 'California', city: 'San Francisco', utcOffset: -8, currency: 'USD' }, 12],
  [{ country: 'US', region: 'California', city: 'Los Angeles', utcOffset: -8, currency: 'USD' }, 5],
  [{ country: 'US', region: 'New York', city: 'New York', utcOffset: -5, currency: 'USD' }, 11],
  [{ country: 'US', region: 'Texas', city: 'Austin', utcOffset: -6, currency: 'USD' }, 5],
  [{ country: 'US', region: 'Washington', city: 'Seattle', utcOffset: -8, currency: 'USD' }, 4],
  [{ country: 'US', region: null, city: null, utcOffset: -5, currency: 'USD' }, 2],
  [{ country: 'CA', region: 'Ontario', city: 'Toronto', utcOffset: -5, currency: 'USD' }, 4],
  [{ country: 'BR', region: 'São Paulo', city: 'São Paulo', utcOffset: -3, currency: 'USD' }, 4],
  [{ country: 'MX', region: 'Mexico City', city: 'Mexico City', utcOffset: -6, currency: 'USD' }, 2],
  [{ country: 'GB', region: 'England', city: 'London', utcOffset: 0, currency: 'GBP' }, 9],
  [{ country: 'GB', region: 'Scotland', city: 'Edinburgh', utcOffset: 0, currency: 'GBP' }, 2],
  [{ country: 'IE', region: 'Leinster', city: 'Dublin', utcOffset: 0, currency: 'EUR' }, 1],
  [{ country: 'DE', region: 'Berlin', city: 'Berlin', utcOffset: 1, currency: 'EUR' }, 6],
  [{ country: 'DE', region: 'Bavaria', city: 'Munich', utcOffset: 1, currency: 'EUR' }, 4],
  [{ country: 'FR', region: 'Île-de-France', city: 'Paris', utcOffset: 1, currency: 'EUR' }, 5],
  [{ country: 'NL', region: 'North Holland', city: 'Amsterdam', utcOffset: 1, currency: 'EUR' }, 3],
  [{ country: 'ES', region: 'Madrid', city: 'Madrid', utcOffset: 1, currency: 'EUR' }, 2],
  [{ country: 'PL', region: null, city: null, utcOffset: 1, currency: 'EUR' }, 2],
  [{ country: 'SE', region: 'Stockholm', city: 'Stockholm', utcOffset: 1, currency: 'EUR' }, 1],
  [{ country: 'IN', region: 'Karnataka', city: 'Bengaluru', utcOffset: 5.5, currency: 'USD' }, 6],
  [{ country: 'IN', region: 'Maharashtra', city: 'Mumbai', utcOffset: 5.5, currency: 'USD' }, 3],
  [{ country: 'JP', region: 'Tokyo', city: 'Tokyo', utcOffset: 9, currency: 'USD' }, 3],
  [{ country: 'SG', region: null, city: 'Singapore', utcOffset: 8, currency: 'USD' }, 1],
  [{ country: 'AU', region: 'New South Wales', city: 'Sydney', utcOffset: 10, currency: 'USD' }, 3],
];

interface Platform {
  browser: string;
  os: string;
  device: string;
}
const platforms: Weighted<Platform> = [
  [{ browser: 'Chrome', os: 'Windows', device: 'desktop' }, 24],
  [{ browser: 'Chrome', os: 'macOS', device: 'desktop' }, 13],
  [{ browser: 'Safari', os: 'macOS', device: 'desktop' }, 8],
  [{ browser: 'Firefox', os: 'Windows', device: 'desktop' }, 4],
  [{ browser: 'Firefox', os: 'Linux', device: 'desktop' }, 3],
  [{ browser: 'Edge', os: 'Windows', device: 'desktop' }, 5],
  [{ browser: 'Chrome', os: 'Linux', device: 'desktop' }, 2],
  [{ browser: 'Safari', os: 'iOS', device: 'mobile' }, 16],
  [{ browser: 'Chrome', os: 'Android', device: 'mobile' }, 14],
  [{ browser: 'Samsung Internet', os: 'Android', device: 'mobile' }, 3],
  [{ browser: 'Safari', os: 'iOS', device: 'tablet' }, 4],
  [{ browser: 'Chrome', os: 'Android', device: 'tablet' }, 2],
];

const blog = [
  '/blog/launch-week',
  '/blog/how-we-built-our-query-engine',
  '/blog/privacy-first-analytics',
  '/blog/parquet-on-s3',
  '/blog/pricing-update',
  '/blog/customer-story-acme',
  '/blog/sql-tips',
  '/blog/year-in-review',
];
const docs = [
  '/docs/getting-started',
  '/docs/api/query',
  '/docs/api/journeys',
  '/docs/api/events',
  '/docs/self-hosting',
  '/docs/sdk',
  '/docs/faq',
  '/docs/changelog',
];
const features = ['/features/dashboards', '/features/funnels', '/features/revenue', '/features/api'];
const home: Weighted<string> = [
  ['/', 8],
  ['/pricing', 2],
  ['/features', 1],
];

interface Source {
  referrer: string | null;
  utm: Record<string, string>;
  landing: Weighted<string>;
}
const sources: Weighted<Source> = [
  [
    {
      referrer: 'https://www.google.com/',
      utm: {},
      landing: [...home, [docs[0]!, 2], [blog[2]!, 1], [features[0]!, 1]],
    },
    28,
  ],
  [
    {
      referrer: 'https://www.google.com/',
      utm: {
        utm_source: 'google',
        utm_medium: 'cpc',
        utm_campaign: 'brand',
        utm_term: 'web analytics api',
        utm_content: 'ad-a',
      },
      landing: [
        ['/pricing', 2],
        ['/', 1],
      ],
    },
    5,
  ],
  [
    {
      referrer: 'https://www.google.com/',
      utm: {
        utm_source: 'google',
        utm_medium: 'cpc',
        utm_campaign: 'competitor',
        utm_term: 'plausible alternative',
        utm_content: 'ad-b',
      },
      landing: [['/features', 1]],
    },
    2,
  ],
  [{ referrer: null, utm: {}, landing: home }, 22],
  [
    {
      referrer: 'https://t.co/x8Yz3Q',
      utm: { utm_source: 'twitter', utm_medium: 'social', utm_campaign: 'launch-week' },
      landing: [
        [blog[0]!, 3],
        ['/', 1],
      ],
    },
    4,
  ],
  [
    {
      referrer: 'https://x.com/',
      utm: {},
      landing: [
        [blog[0]!, 1],
        ['/', 1],
      ],
    },
    3,
  ],
  [{ referrer: 'https://news.ycombinator.com/item?id=41234567', utm: {}, landing: [[blog[1]!, 1]] }, 5],
  [
    {
      referrer: 'https://www.reddit.com/r/analytics/',
      utm: {},
      landing: [
        [blog[2]!, 1],
        ['/', 1],
      ],
    },
    3,
  ],
  [
    {
      referrer: 'https://github.com/example/analytics',
      utm: {},
      landing: [
        [docs[0]!, 3],
        [docs[5]!, 1],
      ],
    },
    6,
  ],
  [
    {
      referrer: 'https://www.linkedin.com/',
      utm: { utm_source: 'linkedin', utm_medium: 'social', utm_campaign: 'customer-stories' },
      landing: [[blog[5]!, 1]],
    },
    2,
  ],
  [
    {
      referrer: null,
      utm: { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'monthly-update' },
      landing: [
        [blog[3]!, 1],
        ['/', 1],
      ],
    },
    4,
  ],
  [{ referrer: 'https://www.bing.com/search?q=analytics+api', utm: {}, landing: home }, 3],
  [{ referrer: 'https://duckduckgo.com/', utm: {}, landing: home }, 2],
  [
    {
      referrer: 'https://www.producthunt.com/posts/analytics',
      utm: { utm_source: 'producthunt', utm_medium: 'referral' },
      landing: [['/', 1]],
    },
    1,
  ],
  [
    {
      referrer: 'https://dev.to/someone/analytics-api-review',
      utm: {},
      landing: [
        [blog[6]!, 1],
        [docs[1]!, 1],
      ],
    },
    1,
  ],
];
const direct = sources[3]![0];

/** Where a reader goes next from a page: a weighted walk whose funnel runs / -> /pricing -> /signup -> /checkout. */
function pageWalk(blogPosts: number): (path: string) => Weighted<string> {
  const posts = [
    ...blog,
    ...Array.from({ length: Math.max(0, blogPosts - blog.length) }, (_, i) => `/blog/post-${blog.length + i + 1}`),
  ];
  const nextPagesByPath = new Map<string, Weighted<string>>();
  return (path) => {
    let next = nextPagesByPath.get(path);
    if (!next) nextPagesByPath.set(path, (next = nextPagesOf(path, posts)));
    return next;
  };
}

function nextPagesOf(path: string, posts: string[]): Weighted<string> {
  if (path === '/pricing')
    return [
      ['/signup', 4],
      ['/features', 2],
      [docs[0]!, 1],
      ['/', 1],
      ['/contact', 1],
    ];
  if (path === '/blog') return posts.map((p) => [p, 1] as const);
  if (path.startsWith('/blog/')) {
    const base: Weighted<string> = [
      ['/blog', 2],
      ['/', 2],
      ['/pricing', 1],
      [blog[0]!, 1],
      [blog[7]!, 1],
    ];
    if (posts.length <= blog.length) return base;
    let key = 2166136261;
    for (let i = 0; i < path.length; i++) key = Math.imul(key ^ path.charCodeAt(i), 16777619);
    const related = [1, 2, 3].map((k) => [posts[hash(key, k) % posts.length]!, 1] as const);
    return [...base, ...related];
  }
  if (path === '/docs' || path.startsWith('/docs/'))
    return [...docs.map((p) => [p, 1] as const), ['/pricing', 1], ['/signup', 1]];
  if (path === '/features' || path.startsWith('/features/'))
    return [...features.map((p) => [p, 1] as const), ['/pricing', 3]];
  return [
    ['/pricing', 4],
    ['/features', 2],
    ['/blog', 2],
    ['/docs', 2],
    ['/about', 1],
    ['/contact', 1],
    ['/careers', 0.3],
    ['/login', 1],
    [blog[1]!, 1],
  ];
}

const plans: Weighted<{ plan: string; cents: number }> = [
  [{ plan: 'free', cents: 0 }, 6],
  [{ plan: 'pro', cents: 2900 }, 3],
  [{ plan: 'team', cents: 9900 }, 1],
];
const exitLinks = [
  'https://github.com/example/analytics',
  'https://twitter.com/example',
  'https://status.example.com/',
  'https://discord.gg/example',
];
const hourWeights: Weighted<number> = [
  [0, 0.4],
  [3, 0.2],
  [7, 1],
  [9, 3],
  [10, 4],
  [11, 4],
  [13, 3],
  [14, 4],
  [15, 4],
  [16, 3],
  [18, 2],
  [19, 3],
  [21, 2],
  [22, 1.5],
  [23, 1],
];

/** Everything about a visitor that stays the same across their sessions, derived from (seed, index) alone. */
interface Visitor {
  id: string;
  place: Place;
  platform: Platform;
  firstSource: Source;
  isDev: boolean;
  /** How likely a session ends with a return visit. */
  loyalty: number;
}

function visitorOf(seed: number, index: number): Visitor {
  const r = seededRandom(hash(seed, index));
  return {
    id: `v_${hex(hash(index, seed ^ 0x5bd1e995))}${hex(hash(seed, index ^ 0x27d4eb2f))}`,
    place: r.weighted(places),
    platform: r.weighted(platforms),
    firstSource: r.weighted(sources),
    isDev: r.chance(0.01),
    loyalty: r.weighted([
      [0.15, 5],
      [0.45, 3],
      [0.75, 1],
    ] as const),
  };
}

/** A scheduled server-side subscription renewal (or refund) of a buyer. */
interface Renewal {
  visitor: number;
  cents: number;
  kind: 'subscription' | 'refund';
}

/** The NDJSON lines of the data set, in day order; exactly `spec.rows` lines. */
export async function* generateEventLines(spec: GeneratorSpec): AsyncGenerator<string> {
  const shape = spec.shape ?? defaultShape;
  const nextPages = pageWalk(shape.blogPosts);
  // With a bound on visitors, each visitor's sessions are numbered in order of creation (ids stay unique).
  const sessionsOf = shape.visitors === null ? null : new Uint16Array(shape.visitors);
  const lastDay = Date.parse(`${spec.endDate}T00:00:00Z`);
  const firstDay = lastDay - (spec.days - 1) * DAY_MS;
  const windowEnd = lastDay + DAY_MS;
  const r = seededRandom(spec.seed);

  // Traffic grows by half over the window and dips at weekends; cumulative row targets per day.
  const weights = Array.from({ length: spec.days }, (_, d) => {
    const weekday = new Date(firstDay + d * DAY_MS).getUTCDay();
    return (1 + (0.5 * d) / spec.days) * (weekday === 0 || weekday === 6 ? 0.65 : 1);
  });
  const totalWeight = weights.reduce((a, b) => a + b, 0);

  // Return visits and renewals scheduled for later days: visitor index * 64 + session number, and renewals.
  const returns: number[][] = Array.from({ length: spec.days }, () => []);
  const renewals: Renewal[][] = Array.from({ length: spec.days }, () => []);
  let nextVisitor = 0;
  let transactions = 0;
  let emitted = 0;
  let cumulativeWeight = 0;

  for (let day = 0; day < spec.days; day++) {
    cumulativeWeight += weights[day]!;
    const target = day === spec.days - 1 ? spec.rows : Math.round((spec.rows * cumulativeWeight) / totalWeight);
    // A row is kept as its timestamp and the JSON text of its other fields, so sorting moves no objects around.
    const rows: { ts: number; body: string }[] = [];
    const dayStart = firstDay + day * DAY_MS;

    const session = (visitorIndex: number, scheduledNumber: number) => {
      const sessionNumber = sessionsOf ? sessionsOf[visitorIndex]!++ : scheduledNumber;
      const visitor = visitorOf(spec.seed, visitorIndex);
      const source = sessionNumber === 0 ? visitor.firstSource : r.chance(0.55) ? direct : r.weighted(sources);
      const localHour = r.weighted(hourWeights);
      const start = dayStart + (localHour - visitor.place.utcOffset) * HOUR_MS + r.int(0, HOUR_MS - 1);
      const sessionId = `s_${visitor.id.slice(2, 14)}${sessionNumber.toString(36)}`;
      const commonFields: Row = {
        domain: spec.domain,
        visitor_id: visitor.id,
        country: visitor.place.country,
        browser: visitor.platform.browser,
        os: visitor.platform.os,
        device: visitor.platform.device,
        ...(visitor.place.region ? { region: visitor.place.region } : {}),
        ...(visitor.place.city ? { city: visitor.place.city } : {}),
        ...(source.referrer ? { referrer: source.referrer } : {}),
        ...source.utm,
        ...(visitor.isDev ? { is_dev: true } : {}),
      };
      const common = JSON.stringify(commonFields).slice(1, -1);
      let ts = start;
      const push = (row: Row) => {
        if (ts >= firstDay && ts < windowEnd) rows.push({ ts, body: `${JSON.stringify(row).slice(1, -1)},${common}` });
      };
      const later = (minSeconds: number, maxSeconds: number) => (ts += r.int(minSeconds * 1000, maxSeconds * 1000));

      const bounce = r.chance(0.4);
      const pageviews = bounce ? 1 : 2 + r.geometric(shape.pageviewStop, shape.maxExtraPageviews);
      let path = r.weighted(source.landing);
      for (let p = 0; p < pageviews; p++) {
        push({ type: 'pageview', session_id: sessionId, url_path: path, scroll_depth: r.int(0, 20) * 5 });
        if (r.chance(0.12)) {
          later(2, 40);
          push({
            type: 'auto',
            session_id: sessionId,
            url_path: path,
            event_name: 'click',
            event_properties: { selector: r.pick(['#cta', 'nav a.pricing', 'footer a', '.card button']) },
          });
        }
        if (path.startsWith('/docs/') && r.chance(0.12)) {
          later(10, 90);
          push({
            type: 'event',
            session_id: sessionId,
            url_path: path,
            event_name: 'download',
            event_properties: {
              file: r.pick(['analytics-sdk-2.3.1.tgz', 'analytics-sdk-2.4.0.tgz', 'openapi.json']),
              version: r.pick([2.3, 2.4]),
            },
          });
        }
        if (path.startsWith('/blog/') && r.chance(0.05)) {
          later(30, 240);
          push({
            type: 'event',
            session_id: sessionId,
            url_path: path,
            event_name: 'newsletter_subscribe',
            event_properties: { source: r.pick(['blog_footer', 'blog_inline']), double_opt_in: true },
          });
        }
        if (path.startsWith('/features/') && r.chance(0.1)) {
          later(5, 120);
          push({
            type: 'event',
            session_id: sessionId,
            url_path: path,
            event_name: 'video_play',
            event_properties: { video: path.slice(10), autoplay: false },
          });
        }
        if (path === '/contact' && r.chance(0.3)) {
          later(20, 200);
          push({
            type: 'auto',
            session_id: sessionId,
            url_path: path,
            event_name: 'form_submit',
            event_properties: { form: 'contact' },
          });
        }
        if (path === '/signup' && r.chance(0.35)) {
          const plan = r.weighted(plans);
          later(20, 180);
          push({
            type: 'auto',
            session_id: sessionId,
            url_path: path,
            event_name: 'form_submit',
            event_properties: { form: 'signup' },
          });
          later(1, 3);
          push({
            type: 'event',
            session_id: sessionId,
            url_path: path,
            event_name: 'signup',
            event_properties: { plan: plan.plan, method: r.pick(['email', 'google', 'github']), trial: plan.cents > 0 },
          });
          if (plan.cents > 0 && r.chance(0.6)) {
            later(8, 90);
            push({ type: 'pageview', session_id: sessionId, url_path: '/checkout', scroll_depth: 100 });
            later(30, 300);
            const base = {
              transaction_id: `txn_${(++transactions).toString(36).padStart(8, '0')}`,
              currency: visitor.place.currency,
              amount_cents: plan.cents,
            };
            push({ type: 'revenue', session_id: sessionId, url_path: '/checkout', revenue_event: 'payment', ...base });
            if (day + 30 < spec.days)
              renewals[day + 30]!.push({ visitor: visitorIndex, cents: plan.cents, kind: 'subscription' });
            if (r.chance(0.06))
              renewals[Math.min(spec.days - 1, day + r.int(1, 5))]!.push({
                visitor: visitorIndex,
                cents: -plan.cents,
                kind: 'refund',
              });
            break;
          }
        }
        if (p === pageviews - 1 && r.chance(0.1)) {
          later(5, 60);
          push({
            type: 'auto',
            session_id: sessionId,
            url_path: path,
            event_name: 'exit_link',
            event_properties: { url: r.pick(exitLinks) },
          });
        }
        later(8, 240);
        path = r.weighted(nextPages(path));
      }
      if ((sessionsOf || sessionNumber < 40) && r.chance(shape.returnChance ?? visitor.loyalty)) {
        const returnDay = day + 1 + r.geometric(0.2, 20);
        if (returnDay < spec.days) returns[returnDay]!.push(visitorIndex * 64 + (sessionsOf ? 0 : sessionNumber + 1));
      }
    };

    const renewal = ({ visitor: index, cents, kind }: Renewal) => {
      const visitor = visitorOf(spec.seed, index);
      const ts = dayStart + r.int(0, DAY_MS - 1);
      const body = JSON.stringify({
        domain: spec.domain,
        type: 'revenue',
        visitor_id: visitor.id,
        session_id: '',
        transaction_id: `txn_${(++transactions).toString(36).padStart(8, '0')}`,
        amount_cents: cents,
        currency: visitor.place.currency,
        revenue_event: kind,
        country: visitor.place.country,
        device: visitor.platform.device,
        browser: visitor.platform.browser,
        os: visitor.platform.os,
        ...(visitor.firstSource.referrer ? { referrer: visitor.firstSource.referrer } : {}),
        ...(visitor.isDev ? { is_dev: true } : {}),
      });
      rows.push({ ts, body: body.slice(1, -1) });
      if (kind === 'subscription' && day + 30 < spec.days) renewals[day + 30]!.push({ visitor: index, cents, kind });
    };

    for (const item of renewals[day]!) renewal(item);
    for (const scheduled of returns[day]!) session(Math.floor(scheduled / 64), scheduled % 64);
    returns[day] = [];
    renewals[day] = [];
    while (emitted + rows.length < target) {
      if (shape.visitors !== null && nextVisitor >= shape.visitors) session(r.int(0, shape.visitors - 1), 0);
      else session(nextVisitor++, 0);
    }

    rows.sort((a, b) => a.ts - b.ts);
    const keep = Math.min(rows.length, spec.rows - emitted);
    for (let i = 0; i < keep; i++) yield `{"timestamp":"${new Date(rows[i]!.ts).toISOString()}",${rows[i]!.body}}`;
    emitted += keep;
  }
}
