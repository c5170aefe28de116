import * as z from 'zod';
import type { KeyedRouteKey } from '../routes.js';
import { dimensions, metrics } from '../requests/query.js';

// The success bodies of every route, for the OpenAPI document and for tests that check real responses
// against them (so the document cannot drift from what the handlers send). Schemas a client names in its own code
// carry an `id`: the document lists them as components, and generated clients get a type of that name.

const timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
  .describe('YYYY-MM-DD HH:MM:SS in the request time zone');
const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const count = z.number().int().min(0);
const queryMs = z.number().min(0).describe('time spent in the query engine, measured');
const bytesScanned = z.number().int().min(0).optional().describe('bytes Athena scanned (AWS only)');
const futureRange = z
  .literal(true)
  .optional()
  .describe('extension: present when the whole range starts after now, so no stored event can be in it');
const page = z.object({ limit: count, offset: count, has_more: z.boolean() }).meta({ id: 'Pagination' });
const nullableString = z.string().nullable();
/** `[start, end]`: arrays of two, which JSON Schema states as minItems and maxItems. */
const pair = (item: z.ZodType) => z.array(item).length(2);

const annotation = z
  .object({
    id: z.string(),
    date: day,
    title: z.string().max(250),
    created_by: z.string(),
    created_at: z.string().datetime(),
    updated_at: z.string().datetime(),
  })
  .meta({ id: 'Annotation' });

const goal = z
  .object({
    id: z.string(),
    kind: z.enum(['event', 'page']).meta({ id: 'GoalKind' }),
    event_name: z.string().optional().describe('the custom event, for kind event'),
    page_path: z.string().optional().describe('the path, for kind page; a trailing * matches every path it begins'),
    created_by: z.string(),
    created_at: z.string().datetime(),
  })
  .meta({ id: 'Goal' });

const sharedLink = z
  .object({
    id: z.string(),
    key_id: z.string().describe("the link's own key, revoked with the link"),
    name: z.string(),
    created_by: z.string(),
    created_at: z.string().datetime(),
  })
  .meta({ id: 'SharedLink' });

const visitor = z
  .object({
    visitor_id: z.string(),
    country: nullableString,
    browser: nullableString,
    os: nullableString,
    device: nullableString,
    pageview_count: count,
    session_count: count,
    event_count: count,
    total_revenue_cents: z.number().int(),
    first_seen: timestamp,
    last_seen: timestamp,
    first_referrer: nullableString,
    entry_page: nullableString,
    latest_revenue_date: timestamp.nullable(),
    revenue_event_count: count,
  })
  .meta({ id: 'Visitor', description: 'One visitor of the journeys list, over the requested range.' });

const pageviewItem = z
  .object({
    timestamp,
    type: z.literal('pageview'),
    session_id: z.string(),
    url_path: z.string(),
    is_entry_page: z.union([z.literal(0), z.literal(1)]),
    referrer: nullableString.optional().describe('entry pages only'),
    utm_source: nullableString.optional().describe('entry pages only'),
    scroll_depth: z.number().optional().describe('entry pages only, when known'),
    country: nullableString.optional().describe('entry pages only'),
    browser: nullableString.optional().describe('entry pages only'),
    os: nullableString.optional().describe('entry pages only'),
    device: nullableString.optional().describe('entry pages only'),
  })
  .meta({
    id: 'TimelinePageview',
    description: 'A pageview; the first of its session (is_entry_page 1) also carries the attribution.',
  });

const customEventFields = {
  timestamp,
  session_id: z.literal(''),
  event_name: nullableString,
  event_properties: z.string().describe('the properties as JSON text'),
};
const eventItem = z
  .object({ ...customEventFields, type: z.literal('event') })
  .meta({ id: 'TimelineEvent', description: 'A custom event.' });
const autoItem = z.object({ ...customEventFields, type: z.literal('auto') }).meta({
  id: 'TimelineAutoEvent',
  description: 'An automatically tracked event (exit link, download, ...); with include_auto_events.',
});
const revenueItem = z
  .object({
    timestamp,
    type: z.literal('revenue'),
    session_id: z.literal(''),
    transaction_id: nullableString,
    amount_cents: z.number().int(),
    currency: nullableString,
    revenue_event: nullableString,
  })
  .meta({
    id: 'TimelineRevenue',
    description: 'A revenue row: a payment (positive) or a refund (negative), in cents.',
  });

const timelineItem = z
  .discriminatedUnion('type', [pageviewItem, eventItem, autoItem, revenueItem])
  .meta({ id: 'TimelineItem' });

const visitorStats = z
  .object({
    visitor_id: z.string(),
    first_seen: timestamp,
    last_seen: timestamp,
    total_sessions: count,
    total_pageviews: count,
    total_events: count,
    total_revenue_cents: z.number().int(),
    avg_scroll_depth: z.number(),
    avg_session_duration_seconds: z.number(),
    country: nullableString,
    region: nullableString,
    city: nullableString,
    browser: nullableString,
    os: nullableString,
    device: nullableString,
    entry_page: nullableString,
    source: nullableString,
    utm_source: nullableString,
    utm_medium: nullableString,
    utm_campaign: nullableString,
  })
  .meta({ id: 'VisitorStats' });

const visitorMeta = z.object({
  domain: z.string(),
  visitor_id: z.string(),
  query_ms: queryMs,
  bytes_scanned: bytesScanned,
});
const eventsMeta = { domain: z.string(), date_range: pair(day), query_ms: queryMs, bytes_scanned: bytesScanned };

/** One answer of POST /v1/query; a batch's answers each have this form. */
const queryAnswer = z
  .object({
    data: z.array(
      z
        .object({
          // Named properties, each present exactly when requested: a generated client then knows every name
          // (a misspelt metric does not compile), where an open map would take any.
          dimensions: z
            .strictObject(Object.fromEntries(dimensions.map((d) => [d, z.string().optional()])))
            .describe('each requested dimension and its value'),
          metrics: z
            .strictObject(Object.fromEntries(metrics.map((m) => [m, z.number().optional()])))
            .describe('each requested metric and its value'),
        })
        .meta({ id: 'QueryRow' }),
    ),
    meta: z.object({
      domain: z.string(),
      date_range: pair(day),
      timezone: z.string(),
      query_ms: queryMs,
      bytes_scanned: bytesScanned,
      future_range: futureRange,
    }),
    pagination: page,
    query: z.object({
      metrics: z.array(z.string()),
      dimensions: z.array(z.string()),
      date_range: pair(day),
      filters: z.array(z.array(z.string()).length(3)),
      sort: z.object({ field: z.string(), order: z.enum(['asc', 'desc']) }).nullable(),
      timezone: z.string(),
    }),
  })
  .meta({ id: 'QueryAnswer' });

export const responseSchemas: Record<KeyedRouteKey, z.ZodType> = {
  journeysList: z.object({
    data: z.array(visitor),
    meta: z.object({
      domain: z.string(),
      date_range: pair(timestamp),
      timezone: z.string(),
      query_ms: queryMs,
      bytes_scanned: bytesScanned,
      future_range: futureRange,
    }),
    pagination: page.extend({ total: count }),
  }),
  journeysTimeline: z.object({
    data: z.array(timelineItem),
    meta: visitorMeta.extend({ date_range: pair(timestamp), timezone: z.string() }),
    pagination: page,
  }),
  journeysStats: z.object({ data: visitorStats, meta: visitorMeta }),
  journeysActivity: z.object({
    data: z.array(
      z
        .object({
          day_of_week: z.number().int().min(1).max(7).describe('1 = Monday .. 7 = Sunday'),
          hour_of_day: z.number().int().min(0).max(23),
          pageviews: count,
          unique_visitors: count,
        })
        .meta({ id: 'ActivityBucket', description: 'Pageviews of one weekday and hour, in UTC.' }),
    ),
    meta: visitorMeta,
  }),
  annotationsList: z.object({
    data: z.array(annotation),
    meta: z.object({ domain: z.string(), date_range: pair(day.nullable()) }),
  }),
  annotationsCreate: annotation,
  annotationsDelete: z.object({ success: z.literal(true) }),
  goalsList: z.object({ data: z.array(goal), meta: z.object({ domain: z.string() }) }),
  goalsCreate: goal,
  goalsDelete: z.object({ success: z.literal(true) }),
  sharedLinksList: z.object({ data: z.array(sharedLink), meta: z.object({ domain: z.string() }) }),
  sharedLinksCreate: sharedLink
    .extend({ token: z.string().describe('the read-only key, shown once: put it in the link, never a key of yours') })
    .meta({ id: 'CreatedSharedLink' }),
  sharedLinksDelete: z.object({ success: z.literal(true) }),
  eventsList: z.object({
    data: z.array(
      z.object({ name: z.string(), count, visitors: count, has_properties: z.boolean() }).meta({ id: 'CustomEvent' }),
    ),
    meta: z.object(eventsMeta),
  }),
  eventProperties: z.object({ data: z.array(z.string()), meta: z.object({ ...eventsMeta, event: z.string() }) }),
  eventPropertyValues: z.object({
    data: z.array(
      z
        .object({
          value: z.string(),
          count,
          visitors: count,
          revenue: z.number().int().optional().describe('cents; with include_revenue=true'),
        })
        .meta({ id: 'PropertyValue' }),
    ),
    meta: z.object({ ...eventsMeta, event: z.string(), property: z.string() }),
  }),
  query: queryAnswer,
  queryBatch: z.object({
    results: z.array(queryAnswer).describe('one answer per query, in the order of the request'),
  }),
};

export const errorSchema = z
  .object({
    error: z.string().describe('machine-readable code'),
    message: z.string().describe('human-readable explanation'),
    details: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe('on 400: each bad field'),
  })
  .meta({ id: 'Error', description: 'Every 4xx and 5xx answer.' });
