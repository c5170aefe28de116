import * as z from 'zod';
import { dateRangeSchema, domainSchema, sortOrderSchema, timeZoneSchema, visitorIdSchema } from './fields.js';
import type { ResolvedRange } from '../time/date-range.js';
import { eventFilterFields, filterSchema, FILTERS_FORM, rowFilterFields, type Filter } from './filters.js';

// The four journeys endpoints: request schemas (strict, no coercion) and the normalised queries the planner
// works from. `domain` is required on every journeys request (docs/API.md).

export const journeyFilterFields = [...rowFilterFields, ...eventFilterFields] as const;
export const visitorSortFields = [
  'last_seen',
  'first_seen',
  'pageviews',
  'sessions',
  'revenue',
  'latest_revenue',
] as const;

export type VisitorSortField = (typeof visitorSortFields)[number];
export type SortOrder = 'asc' | 'desc';

const count = z.number().int().min(0);
const cents = z.number().int();
const offset = z.number().int().min(0).max(1_000_000);

export const visitorListRequestSchema = z
  .strictObject({
    domain: domainSchema,
    date_range: dateRangeSchema.optional(),
    filters: z
      .array(filterSchema(journeyFilterFields, 'JourneysFilterField'), {
        error: (issue) => (issue.code === 'invalid_type' ? FILTERS_FORM : undefined),
      })
      .max(20, 'at most 20 filters')
      .optional(),
    pageviews_gt: count.optional(),
    pageviews_lt: count.optional(),
    sessions_gt: count.optional(),
    sessions_lt: count.optional(),
    revenue_gt: cents.optional(),
    revenue_lt: cents.optional(),
    has_revenue: z.boolean().optional(),
    first_purchase: z.boolean().optional(),
    sort_by: z
      .enum(visitorSortFields, { error: `must be one of ${visitorSortFields.join(', ')}` })
      .meta({ id: 'VisitorSortField' })
      .optional(),
    sort_order: sortOrderSchema.optional(),
    limit: z.number().int().min(1).max(100).optional(),
    offset: offset.optional(),
    timezone: timeZoneSchema.optional(),
    is_dev: z.boolean().optional(),
  })
  .meta({
    id: 'JourneysListRequest',
    example: { domain: 'demo.example.com', date_range: '30d', sort_by: 'last_seen', limit: 10 },
  });

export const timelineRequestSchema = z
  .strictObject({
    domain: domainSchema,
    visitor_id: visitorIdSchema,
    date_range: dateRangeSchema.optional(),
    limit: z.number().int().min(1).max(1000).optional(),
    offset: offset.optional(),
    timezone: timeZoneSchema.optional(),
    is_dev: z.boolean().optional(),
    include_auto_events: z.boolean().optional(),
  })
  .meta({
    id: 'JourneysTimelineRequest',
    example: { domain: 'demo.example.com', visitor_id: 'v_9e3779b1', date_range: '30d', limit: 50 },
  });

/**
 * journeys/stats and journeys/activity: one visitor, all time. `timezone` is an extension of the contract (which
 * answers in UTC, the default): the times and the weekday and hour buckets in that zone.
 */
export const visitorRequestSchema = z
  .strictObject({
    domain: domainSchema,
    visitor_id: visitorIdSchema,
    is_dev: z.boolean().optional(),
    timezone: timeZoneSchema.optional().meta({
      description:
        'Extension: first_seen and last_seen (stats) and the weekday and hour buckets (activity) in this IANA zone. Default UTC, as the contract answers.',
    }),
  })
  .meta({ id: 'VisitorRequest', example: { domain: 'demo.example.com', visitor_id: 'v_9e3779b1' } });

export type VisitorListRequest = z.output<typeof visitorListRequestSchema>;
export type TimelineRequest = z.output<typeof timelineRequestSchema>;
export type VisitorRequest = z.output<typeof visitorRequestSchema>;

export const JOURNEYS_DEFAULTS = { dateRange: '30d', listLimit: 50, timelineLimit: 100 } as const;

/** A strict bound on one per-visitor aggregate (`*_gt` / `*_lt`). */
export interface VisitorBound {
  aggregate: 'pageview_count' | 'session_count' | 'total_revenue_cents';
  operator: '>' | '<';
  value: number;
}

export interface VisitorListQuery {
  domain: string;
  isDev: boolean;
  range: ResolvedRange;
  filters: Filter[];
  bounds: VisitorBound[];
  hasRevenue: boolean;
  firstPurchase: boolean;
  sort: { field: VisitorSortField; order: SortOrder };
  limit: number;
  offset: number;
  /** The domain's days, read only for the first-purchase check (all the domain's history before the range). */
  days?: { firstDay: string; lastDay: string };
}

export interface TimelineQuery {
  domain: string;
  isDev: boolean;
  visitorId: string;
  range: ResolvedRange;
  includeAutoEvents: boolean;
  limit: number;
  offset: number;
}

/** The bounds a list request names, in a fixed order (so the printed SQL is stable). */
export function boundsOf(request: VisitorListRequest): VisitorBound[] {
  const fields: [keyof VisitorListRequest, VisitorBound['aggregate'], VisitorBound['operator']][] = [
    ['pageviews_gt', 'pageview_count', '>'],
    ['pageviews_lt', 'pageview_count', '<'],
    ['sessions_gt', 'session_count', '>'],
    ['sessions_lt', 'session_count', '<'],
    ['revenue_gt', 'total_revenue_cents', '>'],
    ['revenue_lt', 'total_revenue_cents', '<'],
  ];
  return fields.flatMap(([field, aggregate, operator]) => {
    const value = request[field];
    return typeof value === 'number' ? [{ aggregate, operator, value }] : [];
  });
}
