import type { SqlQuery } from '../sql/sql.js';
import type { SqlTarget } from '../sql/target.js';
import { scopedEvents, type EventScope } from '../scope/event-scope.js';
import { integer, print, sql, str, trusted } from '../sql/sql.js';

// GET /v1/events, /v1/events/:name/properties and /v1/events/:name/properties/:key. Custom events are rows
// of type `event`; lists order by count descending, then by name, key or value ascending.

export function printEventList(scope: EventScope, limit: number, target: SqlTarget): SqlQuery {
  return print(sql`WITH base AS (${scopedEvents(target, scope, ['type', 'event_name', 'visitor_id', 'event_properties'])})
SELECT event_name AS name, count(*) AS count, count(DISTINCT visitor_id) AS visitors,
  bool_or(event_properties IS NOT NULL AND event_properties <> '{}') AS has_properties
FROM base WHERE type = 'event'
GROUP BY event_name
ORDER BY count DESC, name ASC
LIMIT ${integer(limit)}`);
}

export function printEventPropertyKeys(scope: EventScope, event: string, limit: number, target: SqlTarget): SqlQuery {
  return print(sql`WITH base AS (${scopedEvents(target, scope, ['type', 'event_name', 'event_properties'])}),
event_rows AS (SELECT event_properties FROM base WHERE type = 'event' AND event_name = ${str(event)} AND event_properties IS NOT NULL)
SELECT property_key AS key, count(*) AS count
FROM event_rows CROSS JOIN UNNEST(${target.dialect.jsonKeys(trusted('event_properties'))}) AS u (property_key)
GROUP BY property_key
ORDER BY count DESC, key ASC
LIMIT ${integer(limit)}`);
}

/** Values of one property; `revenue` is the revenue of the visitors who sent the event with that value. */
export function printEventPropertyValues(
  scope: EventScope,
  event: string,
  key: string,
  limit: number,
  includeRevenue: boolean,
  target: SqlTarget,
): SqlQuery {
  const columns = ['type', 'event_name', 'event_properties', 'visitor_id', ...(includeRevenue ? ['amount_cents'] : [])];
  const revenueCtes = includeRevenue
    ? sql`,
visitor_revenue AS (SELECT visitor_id, ${target.dialect.exactSum(trusted('amount_cents'))} AS amount FROM base WHERE type = 'revenue' GROUP BY visitor_id),
value_revenue AS (
  SELECT v.value, sum(r.amount) AS revenue
  FROM (SELECT DISTINCT value, visitor_id FROM matched) v JOIN visitor_revenue r ON r.visitor_id = v.visitor_id
  GROUP BY v.value)`
    : sql``;
  return print(sql`WITH base AS (${scopedEvents(target, scope, columns)}),
matched AS (
  SELECT visitor_id, ${target.dialect.jsonProperty(trusted('event_properties'), str(key))} AS value
  FROM base WHERE type = 'event' AND event_name = ${str(event)}),
counted AS (SELECT value, count(*) AS count, count(DISTINCT visitor_id) AS visitors FROM matched WHERE value IS NOT NULL GROUP BY value)${revenueCtes}
SELECT c.value, c.count, c.visitors${includeRevenue ? sql`, coalesce(vr.revenue, 0) AS revenue` : sql``}
FROM counted c${includeRevenue ? sql` LEFT JOIN value_revenue vr ON vr.value = c.value` : sql``}
ORDER BY count DESC, value ASC
LIMIT ${integer(limit)}`);
}
