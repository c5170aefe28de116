import * as z from 'zod';
import { QUERY_BATCH_MAX, QUERY_BATCH_ROWS_MAX, QUERY_DEFAULT_LIMIT } from './query-batch-bounds.js';
import { dateRangeSchema, domainSchema, sortOrderSchema, timeZoneSchema } from './fields.js';
import { presets } from '../time/date-range.js';
import type { ResolvedRange } from '../time/date-range.js';
import {
  filterSchema,
  FILTERS_FORM,
  rowFilterFields,
  sessionPageFields,
  type Filter,
  type RowFilterField,
} from './filters.js';

// POST /v1/query: the request schema and the normalised query every later step works from.

export const metrics = [
  'pageviews',
  'visitors',
  'bounce_rate',
  'avg_session_duration',
  'revenue',
  'conversions',
  'conversion_rate',
  // Extension (docs/API.md, "Extensions"): sessions, as the session metrics count them.
  'visits',
] as const;
export const revenueMetrics = ['revenue', 'conversions', 'conversion_rate'] as const;
export const sessionMetrics = ['bounce_rate', 'avg_session_duration', 'visits'] as const;
/** Extensions (docs/API.md, "Extensions"): local weeks (from Monday) and months, named by their first day. */
export const periodDimensions = ['week', 'month'] as const;
/** Extension: the last 30 minutes up to the minute now ("realtime"), a range of POST /v1/query only. */
export const REALTIME_RANGE = '30m';
export const dimensions = [
  ...rowFilterFields,
  'date',
  'hour',
  'event',
  ...sessionPageFields,
  ...periodDimensions,
  'minute',
] as const;
export const sortFields = ['visitors', 'pageviews', 'revenue', 'bounce_rate', 'visits'] as const;

export type Metric = (typeof metrics)[number];
export type Dimension = (typeof dimensions)[number];
export type SortMetric = (typeof sortFields)[number];
/** A sort metric, or (an extension) one of the requested dimensions: rows in the order of its values. */
export type SortField = SortMetric | Dimension;
export const isSortMetric = (field: SortField): field is SortMetric =>
  (sortFields as readonly string[]).includes(field);
const SORT_FIELD_RULE = `must be one of ${sortFields.join(', ')}, or one of the requested dimensions`;
export type SessionPageDimension = (typeof sessionPageFields)[number];

export type TimeDimension = 'date' | 'hour' | 'minute' | (typeof periodDimensions)[number];
/** A dimension that groups by local time (the request's zone): a date, an hour, a minute, a week or a month. */
export const isTimeDimension = (d: Dimension): d is TimeDimension =>
  d === 'date' || d === 'hour' || d === 'minute' || d === 'week' || d === 'month';
/** A time dimension made of whole local days. */
export const isDayBased = (d: Dimension): boolean => d === 'date' || d === 'week' || d === 'month';
export const isSessionPage = (d: Dimension): d is SessionPageDimension =>
  (sessionPageFields as readonly string[]).includes(d);
/** A dimension that groups rows by one of their own columns (rowFieldColumns). */
export const isRowFieldDimension = (d: Dimension): d is RowFilterField =>
  (rowFilterFields as readonly string[]).includes(d);
export type SortOrder = 'asc' | 'desc';

export const queryFilterFields = [
  ...rowFilterFields,
  'event',
  'event_property',
  'exit_link',
  ...sessionPageFields,
] as const;

export const queryRequestSchema = z
  .strictObject({
    domain: domainSchema.optional(),
    metrics: z
      .array(z.enum(metrics, { error: `must be one of ${metrics.join(', ')}` }).meta({ id: 'Metric' }))
      .min(1, 'must name at least one metric')
      .max(metrics.length, `at most ${metrics.length} metrics`)
      .meta({ uniqueItems: true })
      .optional(),
    date_range: z
      .union([z.literal(REALTIME_RANGE).meta({ description: 'extension: the last 30 minutes' }), dateRangeSchema], {
        error: `must be one of ${[...presets, REALTIME_RANGE].join(', ')} or [start, end] dates`,
      })
      .optional(),
    dimensions: z
      .array(z.enum(dimensions, { error: `must be one of ${dimensions.join(', ')}` }).meta({ id: 'Dimension' }))
      .max(2, 'at most 2 dimensions')
      .meta({ uniqueItems: true })
      .optional(),
    filters: z
      .array(filterSchema(queryFilterFields, 'QueryFilterField'), {
        error: (issue) => (issue.code === 'invalid_type' ? FILTERS_FORM : undefined),
      })
      .max(20, 'at most 20 filters')
      .optional(),
    sort: z
      .strictObject({
        field: z.enum([...sortFields, ...dimensions], { error: SORT_FIELD_RULE }).meta({ id: 'SortField' }),
        order: sortOrderSchema.optional(),
      })
      .optional(),
    timezone: timeZoneSchema.optional(),
    limit: z.number().int().min(1).max(1000).optional(),
    offset: z.number().int().min(0).max(1_000_000).optional(),
    include_revenue: z.boolean().optional(),
  })
  .superRefine((q, ctx) => {
    const dims = q.dimensions ?? [];
    if (new Set(dims).size !== dims.length)
      ctx.addIssue({ code: 'custom', path: ['dimensions'], message: 'must not repeat a dimension' });
    if (dims.includes('event') && dims.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['dimensions'],
        message: 'event cannot be combined with another dimension',
      });
    }
    if (q.sort && !isSortMetric(q.sort.field) && !dims.includes(q.sort.field)) {
      ctx.addIssue({ code: 'custom', path: ['sort', 'field'], message: SORT_FIELD_RULE });
    }
    const ms = q.metrics ?? [];
    if (new Set(ms).size !== ms.length)
      ctx.addIssue({ code: 'custom', path: ['metrics'], message: 'must not repeat a metric' });
    if (!q.include_revenue) {
      ms.forEach((m, i) => {
        if ((revenueMetrics as readonly string[]).includes(m)) {
          ctx.addIssue({ code: 'custom', path: ['metrics', i], message: `${m} needs include_revenue: true` });
        }
      });
      if (q.sort?.field === 'revenue') {
        ctx.addIssue({
          code: 'custom',
          path: ['sort', 'field'],
          message: 'sorting by revenue needs include_revenue: true',
        });
      }
    }
  })
  // The example the reference page's "Try it out" starts from: the top pages of the demo site.
  .meta({
    id: 'QueryRequest',
    example: {
      domain: 'demo.example.com',
      metrics: ['visitors', 'pageviews', 'bounce_rate'],
      dimensions: ['page'],
      date_range: '30d',
      sort: { field: 'visitors', order: 'desc' },
      limit: 10,
    },
  });

export type QueryRequest = z.output<typeof queryRequestSchema>;

export interface AnalyticsQuery {
  domain: string;
  metrics: Metric[];
  dimensions: Dimension[];
  filters: Filter[];
  range: ResolvedRange;
  timeZone: string;
  sort: { field: SortField; order: SortOrder } | null;
  limit: number;
  offset: number;
}

export const QUERY_DEFAULTS = {
  metrics: ['visitors', 'pageviews'] as Metric[],
  dateRange: '30d',
  limit: QUERY_DEFAULT_LIMIT,
} as const;

/** POST /v1/query/batch (extension): queries of one domain, each as POST /v1/query takes it. */
export const queryBatchRequestSchema = z
  .strictObject({
    queries: z
      .array(queryRequestSchema)
      .min(1, 'must hold at least one query')
      .max(QUERY_BATCH_MAX, `at most ${QUERY_BATCH_MAX} queries`),
  })
  .superRefine((batch, ctx) => {
    const rows = batch.queries.reduce((sum, q) => sum + (q.limit ?? QUERY_DEFAULTS.limit), 0);
    if (rows > QUERY_BATCH_ROWS_MAX)
      ctx.addIssue({
        code: 'custom',
        path: ['queries'],
        message: `the queries' limits (100 where none is given) add up to ${rows}; a batch takes at most ${QUERY_BATCH_ROWS_MAX} rows`,
      });
    const first = batch.queries[0]?.domain;
    batch.queries.forEach((query, i) => {
      if (query.domain !== first)
        ctx.addIssue({
          code: 'custom',
          path: ['queries', i, 'domain'],
          message: 'every query of a batch names the same domain (or none, for a key of one domain)',
        });
    });
  })
  .meta({
    id: 'QueryBatchRequest',
    example: {
      queries: [
        { domain: 'demo.example.com', metrics: ['visitors', 'pageviews'], date_range: '30d' },
        {
          domain: 'demo.example.com',
          metrics: ['visitors'],
          dimensions: ['referrer'],
          date_range: '30d',
          limit: 10,
        },
      ],
    },
  });

export type QueryBatchRequest = z.output<typeof queryBatchRequestSchema>;
