import * as z from 'zod';
import { dataText } from '../../http/schemas.js';
import type { Dialect } from '../sql/dialect.js';
import { join, sql, str, trusted, type Sql } from '../sql/sql.js';

// Filters `[field, operator, value]`: validation, and compilation into a predicate on one event row.
// Row fields test a column of the row; `event`, `event_property` and `exit_link` test whether the row is the
// custom/auto event sought. How predicates combine (per row, or per visitor) is the caller's choice.

export const rowFilterFields = [
  'page', 'country', 'region', 'city', 'browser', 'os', 'device', 'referrer',
  'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term',
] as const;
export const eventFilterFields = ['event', 'event_property'] as const;
export const filterOperators = ['is', 'is_not', 'contains', 'not_contains', 'starts_with'] as const;

export type RowFilterField = (typeof rowFilterFields)[number];
export type FilterOperator = (typeof filterOperators)[number];
export type FilterField = RowFilterField | (typeof eventFilterFields)[number] | 'exit_link';

export interface Filter {
  field: FilterField;
  operator: FilterOperator;
  value: string;
}

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

/** The label a missing value shows as, and stands for in an `is`/`is_not` value. */
export function missingLabel(field: RowFilterField): string {
  return field === 'referrer' ? '(direct)' : '(not set)';
}

export const MAX_FILTER_VALUE_LENGTH = 1000;

const filterValueSchema = dataText(
  z.string().min(1, 'must not be empty').max(MAX_FILTER_VALUE_LENGTH, `must be at most ${MAX_FILTER_VALUE_LENGTH} characters`),
);

export function filterSchema<F extends readonly [FilterField, ...FilterField[]]>(fields: F) {
  return z
    .tuple([
      z.enum(fields, { error: `must be one of ${fields.join(', ')}` }),
      z.enum(filterOperators, { error: `must be one of ${filterOperators.join(', ')}` }),
      filterValueSchema,
    ])
    .superRefine(([field, operator, value], ctx) => {
      if (field === 'event_property' && !/^[^:]+:/.test(value)) {
        ctx.addIssue({ code: 'custom', path: [2], message: 'must have the form key:value' });
      }
      if ((operator === 'is' || operator === 'is_not') && multiValues(propertyParts(field, value).value).length === 0) {
        ctx.addIssue({ code: 'custom', path: [2], message: 'must name at least one value' });
      }
    })
    .transform(([field, operator, value]): Filter => ({ field, operator, value }));
}

export function isRowFilter(filter: Filter): filter is Filter & { field: RowFilterField } {
  return (rowFilterFields as readonly string[]).includes(filter.field);
}

/** Columns a filter reads. */
export function filterColumns(filter: Filter): string[] {
  if (isRowFilter(filter)) return [rowFieldColumns[filter.field]];
  return filter.field === 'event' ? ['type', 'event_name'] : ['type', 'event_name', 'event_properties'];
}

/** A predicate on one row: the row's column matches, or the row is the custom/auto event the filter seeks. */
export function rowPredicate(filter: Filter, dialect: Dialect): Sql {
  if (isRowFilter(filter)) {
    return match(trusted(rowFieldColumns[filter.field]), filter.operator, filter.value, missingLabel(filter.field));
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

/** Filters a session's path list (`url_paths` of a session fragment) can stand in for: all on `page`. */
export function pathListFilters(filters: readonly Filter[]): boolean {
  return filters.length > 0 && filters.every((f) => f.field === 'page');
}

/**
 * A predicate on a list of paths (a missing path as NULL or ''), for filters pathListFilters accepts: some path
 * passes every filter, as some row of the session would. One plain value of `is` is a membership test; anything
 * else tests each path in a lambda.
 */
export function pathListPredicate(filters: readonly Filter[], list: Sql, dialect: Dialect): Sql {
  const only = filters.length === 1 ? filters[0]! : null;
  const values = only?.operator === 'is' ? multiValues(only.value) : [];
  if (values.length === 1 && values[0] !== missingLabel('page')) return dialect.listContains(list, str(values[0]!));
  const path = trusted('path');
  return dialect.anyElement(list, path, join(filters.map((f) => match(path, f.operator, f.value, missingLabel('page'))), ' AND '));
}

function propertyParts(field: FilterField, value: string): { key?: string; value: string } {
  if (field !== 'event_property') return { value };
  const at = value.indexOf(':');
  return { key: value.slice(0, at), value: value.slice(at + 1) };
}

function multiValues(value: string): string[] {
  return value.split(',').filter((v) => v.length > 0);
}

/**
 * String matching of semantics.md: case-sensitive; `is`/`is_not` take comma-separated values; a missing value
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
