import type { SqlQuery } from '../sql/sql.js';
import type { SqlTarget } from '../sql/target.js';
import { localTime, scopeCondition, scopedEvents, type EventScope } from '../scope/event-scope.js';
import type { OffsetSegment } from '../../time/time-zone.js';
import { firstPageview, referrerSource } from './print-list.js';
import type { TimelinePlan } from './plan.js';
import { integer, join, print, sql, str, trusted, type Sql } from '../sql/sql.js';

// The one-visitor journeys queries: timeline (range, request zone), stats and activity (all time, UTC or the
// zone the request names: an extension of the contract, docs/API.md), and
// the existence probe that tells an unknown visitor (404) from an empty page. Every one names the domain,
// the visitor and is_dev, and the range's `dt` partitions where there is a range.

const timelineColumns = [
  'ts',
  'type',
  'session_id',
  'url_path',
  'referrer',
  'utm_source',
  'scroll_depth',
  'country',
  'browser',
  'os',
  'device',
  'event_name',
  'event_properties',
  'transaction_id',
  'amount_cents',
  'currency',
  'revenue_event',
];

/**
 * The visitor's rows, most recent first, ties by type then session_id (then by the row's own values, so pages
 * never overlap). The entry page of a session is its first pageview in the range; numbering runs after the
 * type filter but only over pageviews, so hiding auto rows never moves it.
 */
export function printTimeline(plan: TimelinePlan, target: SqlTarget): SqlQuery {
  const { dialect } = target;
  const entry = sql`CASE WHEN type = 'pageview' AND row_number() OVER (PARTITION BY session_id, type ORDER BY ts, url_path) = 1 THEN 1 ELSE 0 END`;
  const passThrough = timelineColumns.filter((c) => c !== 'ts').map((c) => trusted(c));
  return print(sql`WITH base AS (${scopedEvents(target, plan.scope, timelineColumns, plan.segments)})
SELECT ${join([sql`${dialect.formatTimestamp(trusted('local_ts'))} AS shown_ts`, ...passThrough, sql`${entry} AS is_entry_page`])}
FROM base
WHERE type IN (${join(plan.types.map((t) => sql`${str(t)}`))})
ORDER BY ts DESC, type ASC, session_id ASC, url_path ASC, event_name ASC, transaction_id ASC
OFFSET ${integer(plan.page.offset)} LIMIT ${integer(plan.page.limit + 1)}`);
}

/** Whether the scope holds any row at all (any type). Asked only when a result came back empty. */
export function printVisitorExists(scope: EventScope, target: SqlTarget): SqlQuery {
  return print(sql`SELECT 1 AS found FROM ${target.catalog.tables.events} WHERE ${scopeCondition(scope)} LIMIT 1`);
}

const statsColumns = [
  'ts',
  'type',
  'session_id',
  'amount_cents',
  'scroll_depth',
  'url_path',
  'referrer_domain',
  'country',
  'region',
  'city',
  'browser',
  'os',
  'device',
  'utm_source',
  'utm_medium',
  'utm_campaign',
];

/** The stats' descriptive fields: output name and the row value it takes from the first pageview. */
const descriptive: [string, Sql][] = [
  ...['country', 'region', 'city', 'browser', 'os', 'device'].map((c): [string, Sql] => [c, trusted(c)]),
  ['entry_page', trusted('url_path')],
  ['source', referrerSource],
  ...['utm_source', 'utm_medium', 'utm_campaign'].map((c): [string, Sql] => [c, trusted(c)]),
];

/**
 * One row; `row_count` 0 means the visitor is unknown. Timestamps are UTC, or local by `segments` (the zone's
 * offsets over the scope's days). The rows are read once (Trino would scan a CTE once per reference): per session
 * first, with the session's first pageview and its attributes, then over the sessions. Session-less revenue rows
 * form the group `''`, which counts as no session.
 */
export function printVisitorStats(scope: EventScope, target: SqlTarget, segments?: OffsetSegment[]): SqlQuery {
  const { dialect } = target;
  const shown = (ts: Sql) => (segments ? localTime(ts, segments) : ts);
  const pageview = sql`type = 'pageview'`;
  const perSession = [
    sql`session_id`,
    sql`count(*) AS row_count`,
    sql`min(ts) AS first_ts`,
    sql`max(ts) AS last_ts`,
    sql`count(*) FILTER (WHERE ${pageview}) AS pageviews`,
    sql`count(*) FILTER (WHERE type = 'event') AS events`,
    sql`${dialect.exactSum(trusted('amount_cents'))} FILTER (WHERE type = 'revenue') AS revenue`,
    sql`sum(scroll_depth) FILTER (WHERE ${pageview}) AS scroll_sum`,
    sql`count(scroll_depth) FILTER (WHERE ${pageview}) AS scroll_count`,
    sql`min(ts) FILTER (WHERE ${pageview}) AS first_pageview_ts`,
    ...descriptive.map(([name, value]) => firstPageview(dialect, value, name)),
  ];
  const overSessions = [
    sql`coalesce(sum(row_count), 0) AS row_count`,
    sql`${dialect.formatTimestamp(shown(trusted('min(first_ts)')))} AS first_seen`,
    sql`${dialect.formatTimestamp(shown(trusted('max(last_ts)')))} AS last_seen`,
    sql`count(*) FILTER (WHERE session_id <> '') AS total_sessions`,
    sql`coalesce(sum(pageviews), 0) AS total_pageviews`,
    sql`coalesce(sum(events), 0) AS total_events`,
    // Each session's revenue is already an exact sum in a wide type; their sum stays in it.
    sql`coalesce(sum(revenue), 0) AS total_revenue_cents`,
    sql`CASE WHEN sum(scroll_count) > 0 THEN round(sum(scroll_sum) / sum(scroll_count), 2) ELSE 0 END AS avg_scroll_depth`,
    sql`coalesce(round(avg(date_diff('millisecond', first_ts, last_ts)) FILTER (WHERE session_id <> '') / 1000, 2), 0) AS avg_session_duration_seconds`,
    ...descriptive.map(
      ([name]) =>
        sql`${dialect.argMinKeepNull(trusted(name), trusted('first_pageview_ts'))} FILTER (WHERE first_pageview_ts IS NOT NULL) AS ${trusted(name)}`,
    ),
  ];
  return print(sql`WITH base AS (${scopedEvents(target, scope, statsColumns)}),
sessions AS (SELECT ${join(perSession)} FROM base GROUP BY session_id)
SELECT ${join(overSessions)}
FROM sessions`);
}

/** Pageviews per (ISO weekday, hour) in UTC, or local by `segments`; only buckets that have some. */
export function printVisitorActivity(scope: EventScope, target: SqlTarget, segments?: OffsetSegment[]): SqlQuery {
  const ts = trusted(segments ? 'local_ts' : 'ts');
  return print(sql`WITH base AS (${scopedEvents(target, scope, ['ts', 'type', 'visitor_id'], segments)})
SELECT ${target.dialect.isoDayOfWeek(ts)} AS day_of_week, hour(${ts}) AS hour_of_day, count(*) AS pageviews, count(DISTINCT visitor_id) AS unique_visitors
FROM base
WHERE type = 'pageview'
GROUP BY 1, 2
ORDER BY 1, 2`);
}
