import { writeFileSync } from 'node:fs';
import { createCredential } from '../shared/services/credentials.js';
import { dashboardLink, demoKeyFile } from '../local/server/dashboard-page.js';
import { importEvents } from '../local/store/local-destination.js';
import { newKeyMessage } from './new-key-message.js';
import type { LocalPaths } from '../local/store/paths.js';
import { seededRandom, type Weighted } from './seeded-random.js';

// The demo site of `npm start`'s first run: a deterministic (seeded) but lifelike product site over the 90 days
// ending today, imported through the same importer as `npm run import`, plus a demo key printed once.

export const DEMO_DOMAIN = 'demo.example.com';
const DAYS = 90;
const VISITORS = 11_000;
const DAY_MS = 86_400_000;

type Row = Record<string, unknown>;

interface Place {
  country: string;
  region: string | null;
  city: string | null;
  utcOffset: number;
  currency: string;
}
const places: Weighted<Place> = [
  [{ country: 'US', region: 'California', city: 'San Francisco', utcOffset: -8, currency: 'USD' }, 14],
  [{ country: 'US', region: 'New York', city: 'New York', utcOffset: -5, currency: 'USD' }, 12],
  [{ country: 'US', region: 'Texas', city: 'Austin', utcOffset: -6, currency: 'USD' }, 6],
  [{ country: 'GB', region: 'England', city: 'London', utcOffset: 0, currency: 'GBP' }, 10],
  [{ country: 'DE', region: 'Berlin', city: 'Berlin', utcOffset: 1, currency: 'EUR' }, 8],
  [{ country: 'DE', region: 'Bavaria', city: 'Munich', utcOffset: 1, currency: 'EUR' }, 4],
  [{ country: 'FR', region: 'Île-de-France', city: 'Paris', utcOffset: 1, currency: 'EUR' }, 6],
  [{ country: 'NL', region: 'North Holland', city: 'Amsterdam', utcOffset: 1, currency: 'EUR' }, 3],
  [{ country: 'IN', region: 'Karnataka', city: 'Bengaluru', utcOffset: 5.5, currency: 'USD' }, 9],
  [{ country: 'CA', region: 'Ontario', city: 'Toronto', utcOffset: -5, currency: 'USD' }, 5],
  [{ country: 'BR', region: 'São Paulo', city: 'São Paulo', utcOffset: -3, currency: 'USD' }, 4],
  [{ country: 'JP', region: 'Tokyo', city: 'Tokyo', utcOffset: 9, currency: 'USD' }, 4],
  [{ country: 'AU', region: 'New South Wales', city: 'Sydney', utcOffset: 10, currency: 'USD' }, 3],
  [{ country: 'PL', region: null, city: null, utcOffset: 1, currency: 'EUR' }, 2],
];

const platforms: Weighted<{ browser: string; os: string; device: string }> = [
  [{ browser: 'Chrome', os: 'Windows', device: 'desktop' }, 26],
  [{ browser: 'Chrome', os: 'macOS', device: 'desktop' }, 14],
  [{ browser: 'Safari', os: 'macOS', device: 'desktop' }, 8],
  [{ browser: 'Firefox', os: 'Windows', device: 'desktop' }, 5],
  [{ browser: 'Firefox', os: 'Linux', device: 'desktop' }, 4],
  [{ browser: 'Edge', os: 'Windows', device: 'desktop' }, 5],
  [{ browser: 'Safari', os: 'iOS', device: 'mobile' }, 17],
  [{ browser: 'Chrome', os: 'Android', device: 'mobile' }, 15],
  [{ browser: 'Safari', os: 'iOS', device: 'tablet' }, 4],
  [{ browser: 'Chrome', os: 'Android', device: 'tablet' }, 2],
];

const blogPosts = [
  '/blog/launch-week',
  '/blog/how-we-built-our-query-engine',
  '/blog/privacy-first-analytics',
  '/blog/parquet-on-s3',
];
const docsPages = ['/docs/getting-started', '/docs/api/query', '/docs/api/journeys', '/docs/self-hosting', '/docs/sdk'];
const HN_POST = '/blog/how-we-built-our-query-engine';

interface Source {
  name: string;
  referrer: string | null;
  utm: Row;
  landing: Weighted<string>;
}
const home: Weighted<string> = [
  ['/', 6],
  ['/pricing', 2],
  ['/features', 1],
];
const sources: Weighted<Source> = [
  [
    {
      name: 'google',
      referrer: 'https://www.google.com/',
      utm: {},
      landing: [...home, [docsPages[0]!, 2], [blogPosts[2]!, 1]],
    },
    30,
  ],
  [
    {
      name: 'google-ads',
      referrer: 'https://www.google.com/',
      utm: {
        utm_source: 'google',
        utm_medium: 'cpc',
        utm_campaign: 'brand',
        utm_term: 'web analytics api',
        utm_content: 'ad-a',
      },
      landing: [['/pricing', 1]],
    },
    5,
  ],
  [{ name: 'direct', referrer: null, utm: {}, landing: home }, 25],
  [
    {
      name: 'twitter',
      referrer: 'https://t.co/x8Yz3Q',
      utm: { utm_source: 'twitter', utm_medium: 'social', utm_campaign: 'launch-week' },
      landing: [
        [blogPosts[0]!, 3],
        ['/', 1],
      ],
    },
    5,
  ],
  [
    {
      name: 'x',
      referrer: 'https://x.com/',
      utm: {},
      landing: [
        [blogPosts[0]!, 1],
        ['/', 1],
      ],
    },
    4,
  ],
  [
    {
      name: 'hacker-news',
      referrer: 'https://news.ycombinator.com/item?id=41234567',
      utm: {},
      landing: [[HN_POST, 1]],
    },
    6,
  ],
  [
    {
      name: 'github',
      referrer: 'https://github.com/example/analytics',
      utm: {},
      landing: [
        [docsPages[0]!, 3],
        [docsPages[4]!, 1],
      ],
    },
    7,
  ],
  [
    {
      name: 'newsletter',
      referrer: null,
      utm: { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'monthly-update' },
      landing: [
        [blogPosts[3]!, 1],
        ['/', 1],
      ],
    },
    4,
  ],
  [{ name: 'bing', referrer: 'https://www.bing.com/search?q=analytics+api', utm: {}, landing: home }, 3],
  [{ name: 'duckduckgo', referrer: 'https://duckduckgo.com/', utm: {}, landing: home }, 2],
];
const hackerNews = sources.find(([s]) => s.name === 'hacker-news')![0];
const direct = sources.find(([s]) => s.name === 'direct')![0];

/** Where a reader goes next from a page, as a weighted walk; the funnel runs / -> /pricing -> /signup. */
function nextPages(path: string): Weighted<string> {
  if (path === '/pricing')
    return [
      ['/signup', 4],
      ['/features', 2],
      ['/docs/getting-started', 1],
      ['/', 1],
    ];
  if (path.startsWith('/blog/'))
    return [
      ['/blog', 2],
      ['/', 2],
      ['/pricing', 1],
      [blogPosts[0]!, 1],
    ];
  if (path.startsWith('/docs'))
    return [
      ['/docs/api/query', 2],
      ['/docs/api/journeys', 1],
      ['/docs/sdk', 1],
      ['/pricing', 1],
      ['/signup', 1],
    ];
  return [
    ['/pricing', 4],
    ['/features', 2],
    ['/blog', 2],
    ['/docs', 2],
    ['/about', 1],
    ['/contact', 1],
    [blogPosts[1]!, 1],
  ];
}

const plans = { free: 0, pro: 2900, team: 9900 } as const;
const exitLinks = [
  'https://github.com/example/analytics',
  'https://twitter.com/example',
  'https://status.example.com/',
];
type Random = ReturnType<typeof seededRandom>;

/** The demo events over the 90 UTC days ending on `now`'s date, never later than `now`; same `now`, same events. */
export function generateDemoEvents(now = new Date()): Row[] {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const firstDay = today - (DAYS - 1) * DAY_MS;
  const random = seededRandom(today / DAY_MS);
  const rows: Row[] = [];
  let transactions = 0;
  const nextTransactionId = () => `txn_${(++transactions).toString().padStart(6, '0')}`;
  // Traffic grows over the quarter and dips at weekends; a Hacker News launch 30 days ago brings a spike.
  const days: Weighted<number> = Array.from({ length: DAYS }, (_, i) => {
    const weekday = new Date(firstDay + i * DAY_MS).getUTCDay();
    return [firstDay + i * DAY_MS, (1 + (1.5 * i) / DAYS) * (weekday === 0 || weekday === 6 ? 0.6 : 1)] as const;
  });
  const launchDay = today - 30 * DAY_MS;

  for (let v = 0; v < VISITORS; v++) {
    const visitor = {
      id: `v_${((v * 2_654_435_761) >>> 0).toString(16).padStart(8, '0')}`,
      place: random.weighted(places),
      platform: random.weighted(platforms),
      isDev: random.chance(0.01),
    };
    const fromLaunch = random.chance(0.08);
    let day = fromLaunch ? launchDay + random.int(0, 1) * DAY_MS : random.weighted(days);
    const sessions = Math.min(12, 1 + geometric(random.next, 0.45));
    for (let s = 0; s < sessions && day <= today; s++) {
      // Returning visitors mostly come back directly.
      const source =
        s === 0
          ? fromLaunch
            ? hackerNews
            : random.weighted(sources)
          : random.chance(0.6)
            ? direct
            : random.weighted(sources);
      const localHour = random.weighted([
        [9, 3],
        [11, 4],
        [14, 4],
        [16, 3],
        [19, 3],
        [21, 2],
        [23, 1],
        [3, 0.3],
      ] as const);
      const start = day + (localHour - visitor.place.utcOffset) * 3_600_000 + random.int(0, 3_599_999);
      addSession(rows, random, {
        visitor,
        sessionId: `s_${visitor.id.slice(2)}_${s}`,
        source,
        start,
        now: now.getTime(),
        nextTransactionId,
      });
      day += random.int(1, 14) * DAY_MS;
    }
  }
  return rows.filter((row) => {
    const ts = Date.parse(row.timestamp as string);
    return ts >= firstDay && ts <= now.getTime();
  });
}

interface SessionPlan {
  visitor: { id: string; place: Place; platform: Row; isDev: boolean };
  sessionId: string;
  source: Source;
  start: number;
  now: number;
  nextTransactionId: () => string;
}

/** One visit: a walk over the pages (42% bounce), with the events a reader triggers on the way. */
function addSession(rows: Row[], random: Random, plan: SessionPlan): void {
  const { visitor, source } = plan;
  const { place } = visitor;
  const dims: Row = visitor.isDev
    ? { ...visitor.platform, is_dev: true }
    : {
        referrer: source.referrer,
        ...source.utm,
        country: place.country,
        region: place.region,
        city: place.city,
        ...visitor.platform,
      };
  let ts = plan.start;
  const row = (fields: Row): Row => ({
    domain: DEMO_DOMAIN,
    timestamp: new Date(ts).toISOString(),
    visitor_id: visitor.id,
    session_id: plan.sessionId,
    ...dims,
    ...fields,
  });
  const emit = (afterSeconds: number, fields: Row) => {
    ts += afterSeconds * 1000;
    rows.push(row(fields));
  };

  const pageviews = random.chance(0.42) ? 1 : 2 + geometric(random.next, 0.35);
  let path = random.weighted(source.landing);
  for (let p = 0; p < pageviews; p++) {
    emit(p === 0 ? 0 : random.int(8, 240), {
      type: 'pageview',
      url_path: path,
      scroll_depth: random.chance(0.1) ? null : random.int(2, 20) * 5,
    });
    if (random.chance(0.12))
      emit(random.int(3, 40), {
        type: 'auto',
        url_path: path,
        event_name: 'click',
        event_properties: { element: random.pick(['cta', 'nav', 'footer']) },
      });
    if (path.startsWith('/docs/') && random.chance(0.15)) {
      emit(random.int(10, 90), {
        type: 'event',
        url_path: path,
        event_name: 'download',
        event_properties: { file: 'analytics-sdk-2.3.1.tgz', version: 2.3 },
      });
    }
    if (path.startsWith('/blog/') && random.chance(0.06)) {
      emit(random.int(30, 240), {
        type: 'event',
        url_path: path,
        event_name: 'newsletter_subscribe',
        event_properties: { source: 'blog_footer', double_opt_in: true },
      });
    }
    if (path === '/signup' && random.chance(0.55)) {
      const chosen = random.weighted([
        ['free', 6],
        ['pro', 3],
        ['team', 1],
      ] as const);
      emit(random.int(20, 120), {
        type: 'auto',
        url_path: path,
        event_name: 'form_submit',
        event_properties: { form: 'signup' },
      });
      emit(0, {
        type: 'event',
        url_path: path,
        event_name: 'signup',
        event_properties: { plan: chosen, source: source.name, seats: chosen === 'team' ? random.int(3, 20) : 1 },
      });
      if (chosen !== 'free' && random.chance(0.7)) {
        emit(random.int(30, 200), { type: 'pageview', url_path: '/checkout', scroll_depth: 100 });
        addRevenue(rows, random, plan.nextTransactionId, {
          base: row({}),
          amount: plans[chosen],
          currency: place.currency,
          paidAt: ts,
          now: plan.now,
        });
      }
      return;
    }
    if (p === pageviews - 1 && random.chance(0.1))
      emit(random.int(5, 60), {
        type: 'auto',
        url_path: path,
        event_name: 'exit_link',
        event_properties: { url: random.pick(exitLinks) },
      });
    path = random.weighted(nextPages(path));
  }
}

/** A payment at checkout, monthly renewals sent server-side (no session), and now and then a refund. */
function addRevenue(
  rows: Row[],
  random: Random,
  nextTransactionId: () => string,
  order: { base: Row; amount: number; currency: string; paidAt: number; now: number },
): void {
  const revenue = (fields: Row) => ({
    type: 'revenue',
    transaction_id: nextTransactionId(),
    amount_cents: order.amount,
    currency: order.currency,
    ...fields,
  });
  rows.push({ ...order.base, ...revenue({ url_path: '/checkout', revenue_event: 'payment' }) });
  const { session_id: _, ...serverSide } = order.base;
  for (let at = order.paidAt + 30 * DAY_MS; at <= order.now; at += 30 * DAY_MS) {
    rows.push({ ...serverSide, ...revenue({ timestamp: new Date(at).toISOString(), revenue_event: 'subscription' }) });
  }
  if (random.chance(0.08)) {
    const refundAt = new Date(order.paidAt + random.int(1, 5) * DAY_MS).toISOString();
    rows.push({
      domain: DEMO_DOMAIN,
      visitor_id: order.base.visitor_id,
      session_id: '',
      timestamp: refundAt,
      ...revenue({ amount_cents: -order.amount, revenue_event: 'refund' }),
    });
  }
}

/** 0, 1, 2, ... with P(k) = (1 - p)^k p. */
function geometric(next: () => number, p: number): number {
  let k = 0;
  while (next() > p && k < 20) k++;
  return k;
}

/** Imports the demo site and prints a demo key with a ready-to-paste curl line. */
export async function seedDemo(
  paths: LocalPaths,
  apiUrl: string,
  print: (text: string) => void = console.log,
): Promise<void> {
  const events = generateDemoEvents();
  const report = await importEvents(events, paths);
  if (report.rejected.length > 0) throw new Error(`demo data rejected: ${JSON.stringify(report.rejected.slice(0, 3))}`);
  const key = await createCredential({ type: 'project', domains: [DEMO_DOMAIN], owner: 'demo-user' });
  // For the dashboard link `npm start` prints at each start (dashboardLink); readable by this user only.
  writeFileSync(demoKeyFile(paths), JSON.stringify({ domain: DEMO_DOMAIN, token: key.token }), { mode: 0o600 });
  const body = JSON.stringify({ metrics: ['visitors', 'pageviews', 'bounce_rate'], date_range: '7d' });
  print(
    [
      `Demo data: ${report.rowsWritten} events for ${DEMO_DOMAIN} over the last ${DAYS} days.`,
      newKeyMessage(key),
      '',
      `Dashboard (the link carries the demo key): ${dashboardLink(paths, apiUrl)}`,
      `API reference: ${apiUrl}/docs`,
      '',
      'Try it:',
      `  curl -s -X POST ${apiUrl}/v1/query -H "Authorization: Bearer ${key.token}" -H 'content-type: application/json' -d '${body}'`,
    ].join('\n'),
  );
}
