import * as z from 'zod';
import type { RouteKey } from '../routes.js';

// The success bodies of every route, for the OpenAPI document and for tests that check real responses
// against them (so the document cannot drift from what the handlers send).

const timestamp = z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/).describe('YYYY-MM-DD HH:MM:SS in the request time zone');
const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const count = z.number().int().min(0);
const queryMs = z.number().min(0).describe('time spent in the query engine, measured');
const bytesScanned = z.number().int().min(0).optional().describe('bytes Athena scanned (AWS only)');
const page = z.object({ limit: count, offset: count, has_more: z.boolean() });
const nullableString = z.string().nullable();

const annotation = z.object({
  id: z.string(),
  date: day,
  title: z.string().max(250),
  created_by: z.string(),
  created_at: z.string().datetime(),
  updated_at: z.string().datetime(),
});

const visitor = z.object({
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
});

const timelineItem = z
  .object({
    timestamp,
    type: z.enum(['pageview', 'event', 'revenue', 'auto']),
    session_id: z.string(),
  })
  .catchall(z.unknown())
  .describe('pageview: url_path, is_entry_page (+ referrer, utm_source, scroll_depth, country, browser, os, device on entry pages); event/auto: event_name, event_properties (JSON text); revenue: transaction_id, amount_cents, currency, revenue_event');

const visitorStats = z.object({
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
});

const visitorMeta = z.object({ domain: z.string(), visitor_id: z.string(), query_ms: queryMs, bytes_scanned: bytesScanned });
const eventsMeta = { domain: z.string(), date_range: z.tuple([day, day]), query_ms: queryMs, bytes_scanned: bytesScanned };

export const responseSchemas: Record<RouteKey, z.ZodType> = {
  journeysList: z.object({
    data: z.array(visitor),
    meta: z.object({ domain: z.string(), date_range: z.tuple([timestamp, timestamp]), timezone: z.string(), query_ms: queryMs, bytes_scanned: bytesScanned }),
    pagination: page.extend({ total: count }),
  }),
  journeysTimeline: z.object({
    data: z.array(timelineItem),
    meta: visitorMeta.extend({ date_range: z.tuple([timestamp, timestamp]), timezone: z.string() }),
    pagination: page,
  }),
  journeysStats: z.object({ data: visitorStats, meta: visitorMeta }),
  journeysActivity: z.object({
    data: z.array(z.object({ day_of_week: z.number().int().min(1).max(7), hour_of_day: z.number().int().min(0).max(23), pageviews: count, unique_visitors: count })),
    meta: visitorMeta,
  }),
  annotationsList: z.object({ data: z.array(annotation), meta: z.object({ domain: z.string(), date_range: z.tuple([day.nullable(), day.nullable()]) }) }),
  annotationsCreate: annotation,
  annotationsDelete: z.object({ success: z.literal(true) }),
  eventsList: z.object({
    data: z.array(z.object({ name: z.string(), count, visitors: count, has_properties: z.boolean() })),
    meta: z.object(eventsMeta),
  }),
  eventProperties: z.object({ data: z.array(z.string()), meta: z.object({ ...eventsMeta, event: z.string() }) }),
  eventPropertyValues: z.object({
    data: z.array(z.object({ value: z.string(), count, visitors: count, revenue: z.number().int().optional() })),
    meta: z.object({ ...eventsMeta, event: z.string(), property: z.string() }),
  }),
  query: z.object({
    data: z.array(z.object({ dimensions: z.record(z.string(), z.string()), metrics: z.record(z.string(), z.number()) })),
    meta: z.object({ domain: z.string(), date_range: z.tuple([day, day]), timezone: z.string(), query_ms: queryMs, bytes_scanned: bytesScanned }),
    pagination: page,
    query: z.object({
      metrics: z.array(z.string()),
      dimensions: z.array(z.string()),
      date_range: z.tuple([day, day]),
      filters: z.array(z.tuple([z.string(), z.string(), z.string()])),
      sort: z.object({ field: z.string(), order: z.enum(['asc', 'desc']) }).nullable(),
      timezone: z.string(),
    }),
  }),
};

export const errorSchema = z.object({
  error: z.string().describe('machine-readable code'),
  message: z.string().describe('human-readable explanation'),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional().describe('on 400: each bad field'),
});
