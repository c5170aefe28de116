import { addDays, rangeOfDates, type ResolvedRange } from '../shared/time/date-range.js';

// The dashboard query mix: what one load of an analytics dashboard asks, as the request bodies a client sends.
// Date ranges are explicit `[start, end]` days ending on the data set's last day, so a cached data set answers
// the same questions on any later day (a preset like `30d` would move with the clock). Reusable as is by any
// other bench or load test: `dashboardMix(domain, lastDay)`.

export const mixIds = [
  'totals',
  'top_pages',
  'top_referrers',
  'countries',
  'devices',
  'daily_ny',
  'hourly_kolkata',
  'country_device',
  'events',
  'page_filter',
  'property_filter',
  'revenue',
  'journeys',
] as const;

export type MixId = (typeof mixIds)[number];

export interface QueryBody {
  domain: string;
  metrics: string[];
  dimensions?: string[];
  date_range: [string, string];
  filters?: [string, string, string][];
  sort?: { field: string; order: 'asc' | 'desc' };
  timezone?: string;
  limit?: number;
  include_revenue?: boolean;
}

export interface JourneysListBody {
  domain: string;
  date_range: [string, string];
  timezone?: string;
  limit?: number;
}

export type MixQuery =
  | { id: Exclude<MixId, 'journeys'>; title: string; path: '/v1/query'; body: QueryBody }
  | { id: 'journeys'; title: string; path: '/v1/journeys/list'; body: JourneysListBody };

/** The mix for `domain`, its ranges ending on `lastDay` (`YYYY-MM-DD`). */
export function dashboardMix(domain: string, lastDay: string): MixQuery[] {
  const days = (n: number): [string, string] => [addDays(lastDay, -(n - 1)), lastDay];
  const d30 = days(30);
  const query = (
    id: Exclude<MixId, 'journeys'>,
    title: string,
    body: Omit<QueryBody, 'domain' | 'date_range'> & { date_range?: [string, string] },
  ): MixQuery => ({
    id,
    title,
    path: '/v1/query',
    body: { domain, date_range: d30, ...body },
  });
  return [
    query('totals', 'totals 30d: visitors, pageviews, bounce rate, visit duration', {
      metrics: ['visitors', 'pageviews', 'bounce_rate', 'avg_session_duration'],
    }),
    query('top_pages', 'top pages 30d', {
      metrics: ['visitors', 'pageviews', 'bounce_rate'],
      dimensions: ['page'],
      limit: 10,
    }),
    query('top_referrers', 'top referrers 30d', {
      metrics: ['visitors', 'bounce_rate'],
      dimensions: ['referrer'],
      limit: 10,
    }),
    query('countries', 'countries 30d', { metrics: ['visitors'], dimensions: ['country'], limit: 10 }),
    query('devices', 'devices 30d', {
      metrics: ['visitors', 'bounce_rate', 'avg_session_duration'],
      dimensions: ['device'],
    }),
    query('daily_ny', 'daily series 90d, America/New_York', {
      metrics: ['visitors', 'pageviews', 'bounce_rate'],
      dimensions: ['date'],
      date_range: days(90),
      timezone: 'America/New_York',
    }),
    query('hourly_kolkata', 'hourly series 7d, Asia/Kolkata', {
      metrics: ['visitors', 'pageviews'],
      dimensions: ['hour'],
      date_range: days(7),
      timezone: 'Asia/Kolkata',
      limit: 200,
    }),
    query('country_device', 'country x device 30d', {
      metrics: ['visitors', 'pageviews'],
      dimensions: ['country', 'device'],
      limit: 20,
    }),
    query('events', 'custom events 30d (event dimension)', {
      metrics: ['visitors', 'pageviews'],
      dimensions: ['event'],
      limit: 10,
    }),
    query('page_filter', 'referrers of /pricing 30d (page filter)', {
      metrics: ['visitors', 'pageviews', 'bounce_rate'],
      dimensions: ['referrer'],
      filters: [['page', 'is', '/pricing']],
      limit: 10,
    }),
    query('property_filter', 'pages of pro signups 30d (event_property filter)', {
      metrics: ['visitors', 'pageviews'],
      dimensions: ['page'],
      filters: [['event_property', 'is', 'plan:pro']],
      limit: 10,
    }),
    query('revenue', 'revenue by country 30d (include_revenue)', {
      metrics: ['visitors', 'revenue', 'conversions', 'conversion_rate'],
      dimensions: ['country'],
      sort: { field: 'revenue', order: 'desc' },
      include_revenue: true,
      limit: 10,
    }),
    {
      id: 'journeys',
      title: 'journeys list 30d (POST /v1/journeys/list)',
      path: '/v1/journeys/list',
      body: { domain, date_range: d30 },
    },
  ];
}

/** The instants and partitions a mix query covers, resolved exactly as the API resolves `[start, end]`. */
export function rangeOf(query: MixQuery): ResolvedRange {
  return rangeOfDates(query.body.date_range[0], query.body.date_range[1], query.body.timezone ?? 'UTC');
}

/** Rows a query answers at most: its page size (the API's defaults where the body names none). */
export function pageSizeOf(query: MixQuery): number {
  return query.body.limit ?? (query.path === '/v1/query' ? 100 : 50);
}
