import {
  isRowFilter,
  isSessionPageFilter,
  missingLabel,
  multiValues,
  propertyParts,
  type Filter,
  type FilterOperator,
  type RowFilterField,
} from '../../requests/filters.js';
import type { Dialect } from '../sql/dialect.js';
import { join, sql, str, trusted, type Sql } from '../sql/sql.js';

// What a filter means on stored rows: the column behind each field, and the predicate on one event row.
// Row fields test a column of the row; `event`, `event_property` and `exit_link` test whether the row is the
// custom/auto event sought. How predicates combine (per row, or per visitor) is the caller's choice.

/** The stored column behind each row field and dimension. `referrer` reads the referrer's domain. */
export const rowFieldColumns: Record<RowFilterField, string> = {
  page: 'url_path',
  country: 'country',
  region: 'region',
  city: 'city',
  browser: 'browser',
  os: 'os',
  device: 'device',
  referrer: 'referrer_domain',
  utm_source: 'utm_source',
  utm_medium: 'utm_medium',
  utm_campaign: 'utm_campaign',
  utm_content: 'utm_content',
  utm_term: 'utm_term',
};

/** Columns a filter reads. */
export function filterColumns(filter: Filter): string[] {
  if (isRowFilter(filter)) return [rowFieldColumns[filter.field]];
  // The page is each row's session's, found over the rows by the statement (analytics/print.ts, baseRows).
  if (isSessionPageFilter(filter)) return ['session_id', 'type', 'url_path'];
  return filter.field === 'event' ? ['type', 'event_name'] : ['type', 'event_name', 'event_properties'];
}

/** A predicate on one row: the row's column matches, or the row is the custom/auto event the filter seeks. */
export function rowPredicate(filter: Filter, dialect: Dialect): Sql {
  if (isRowFilter(filter)) {
    return match(trusted(rowFieldColumns[filter.field]), filter.operator, filter.value, missingLabel(filter.field));
  }
  if (isSessionPageFilter(filter)) {
    return match(trusted(filter.field), filter.operator, filter.value, missingLabel(filter.field));
  }
  if (filter.field === 'event') {
    return sql`(type = 'event' AND ${match(trusted('event_name'), filter.operator, filter.value, null)})`;
  }
  if (filter.field === 'event_property') {
    const { key, value } = propertyParts(filter.field, filter.value);
    const property = dialect.jsonProperty(trusted('event_properties'), str(key!));
    return sql`(type = 'event' AND ${match(property, filter.operator, value, null)})`;
  }
  const url = dialect.jsonProperty(trusted('event_properties'), str('url'));
  return sql`(type = 'auto' AND event_name = 'exit_link' AND ${match(url, filter.operator, filter.value, null)})`;
}

/**
 * The rows a visitor filter's rowPredicate or the event dimension's segments can match, and all the columns they read
 * (`type`, `event_name`, `event_properties`): custom events and exit links. The custom-event buckets hold these
 * rows' distinct values per bucket and visitor (derived/custom-event-buckets.ts).
 */
export const visitorFilterRows = sql`(type = 'event' OR (type = 'auto' AND event_name = 'exit_link'))`;

/** Filters a session's path list (`url_paths` of a session fragment) can stand in for: all on `page`. */
export function canPathListsFilter(filters: readonly Filter[]): boolean {
  return filters.length > 0 && filters.every((f) => f.field === 'page');
}

/**
 * A predicate on a list of paths (a missing path as NULL or ''), for filters canPathListsFilter accepts: some path
 * passes every filter, as some row of the session would. One plain value of `is` is a membership test; anything
 * else tests each path in a lambda.
 */
export function pathListPredicate(filters: readonly Filter[], list: Sql, dialect: Dialect): Sql {
  const only = filters.length === 1 ? filters[0]! : null;
  const values = only?.operator === 'is' ? multiValues(only.value) : [];
  if (values.length === 1 && values[0] !== missingLabel('page')) return dialect.listContains(list, str(values[0]!));
  const path = trusted('path');
  return dialect.anyElement(
    list,
    path,
    join(
      filters.map((f) => match(path, f.operator, f.value, missingLabel('page'))),
      ' AND ',
    ),
  );
}

/**
 * String matching of filters (docs/API.md, Filters): case-sensitive; `is`/`is_not` take comma-separated values; a missing value
 * (NULL or '') never matches is/contains/starts_with and always passes is_not/not_contains, unless the
 * missing-value label is among the `is`/`is_not` values. Substring tests use strpos, so `%` and `_` are data.
 */
function match(column: Sql, operator: FilterOperator, value: string, label: string | null): Sql {
  const missing = sql`(${column} IS NULL OR ${column} = '')`;
  switch (operator) {
    case 'contains':
      return sql`(${column} IS NOT NULL AND strpos(${column}, ${str(value)}) > 0)`;
    case 'not_contains':
      return sql`(${column} IS NULL OR strpos(${column}, ${str(value)}) = 0)`;
    case 'starts_with':
      return sql`(${column} IS NOT NULL AND starts_with(${column}, ${str(value)}))`;
    case 'is':
    case 'is_not': {
      const values = multiValues(value);
      const wantsMissing = label !== null && values.includes(label);
      const present = values.filter((v) => v !== label);
      const inList = present.length ? sql`${column} IN (${join(present.map((v) => sql`${str(v)}`))})` : null;
      if (operator === 'is') {
        if (inList && wantsMissing) return sql`(${inList} OR ${missing})`;
        return inList ? sql`(${inList})` : missing;
      }
      if (wantsMissing) return inList ? sql`(NOT ${missing} AND NOT ${inList})` : sql`(NOT ${missing})`;
      return inList ? sql`(${missing} OR NOT ${inList})` : sql`(true)`;
    }
  }
}
