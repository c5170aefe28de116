import * as z from 'zod';
import { dataText } from './fields.js';

// Filters `[field, operator, value]` as requests send them: the fields and operators, the tuple's schema, and how
// a value reads (comma-separated values, `key:value` of a property). What a filter means in SQL is
// shared/query/scope/filters.ts.

export const rowFilterFields = [
  'page',
  'country',
  'region',
  'city',
  'browser',
  'os',
  'device',
  'referrer',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'utm_term',
] as const;
export const eventFilterFields = ['event', 'event_property'] as const;
/**
 * Extensions of POST /v1/query (docs/API.md, "Extensions"): a session's first and last pageview's path, as
 * dimensions and as filters that keep every row of the sessions whose page matches.
 */
export const sessionPageFields = ['entry_page', 'exit_page'] as const;
export const filterOperators = ['is', 'is_not', 'contains', 'not_contains', 'starts_with'] as const;

export type RowFilterField = (typeof rowFilterFields)[number];
export type FilterOperator = (typeof filterOperators)[number];
export type SessionPageField = (typeof sessionPageFields)[number];
export type FilterField = RowFilterField | SessionPageField | (typeof eventFilterFields)[number] | 'exit_link';

export interface Filter {
  field: FilterField;
  operator: FilterOperator;
  value: string;
}

/** The label a missing value shows as, and stands for in an `is`/`is_not` value. */
export function missingLabel(field: RowFilterField | SessionPageField): string {
  return field === 'referrer' ? '(direct)' : '(not set)';
}

export const MAX_FILTER_VALUE_LENGTH = 1000;

const filterValueSchema = dataText(
  z
    .string()
    .min(1, 'must not be empty')
    .max(MAX_FILTER_VALUE_LENGTH, `must be at most ${MAX_FILTER_VALUE_LENGTH} characters`),
);

/** What a filter looks like, for the 400 of one sent in another form. */
export const FILTER_FORM = 'must be [field, operator, value], e.g. ["page", "is", "/pricing"]';

/** The filters array, for the 400 of one sent in another form (an object, a string). */
export const FILTERS_FORM = 'must be an array of [field, operator, value] filters, e.g. [["page", "is", "/pricing"]]';

/** The operators, one schema named for generated clients. */
const filterOperatorSchema = z
  .enum(filterOperators, { error: `must be one of ${filterOperators.join(', ')}` })
  .meta({ id: 'FilterOperator' });

/** A filter of `fields`; `name`, where given, names the fields' enum in the OpenAPI document. */
export function filterSchema<F extends readonly [FilterField, ...FilterField[]]>(fields: F, name?: string) {
  const field = z.enum(fields, { error: `must be one of ${fields.join(', ')}` });
  return z
    .tuple([name ? field.meta({ id: name }) : field, filterOperatorSchema, filterValueSchema], {
      error: (issue) => (issue.code === 'invalid_type' ? FILTER_FORM : undefined),
    })
    .meta({ minItems: 3, maxItems: 3, description: '[field, operator, value]' })
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

/** A filter on a session's entry or exit page (an extension): keeps every row of the sessions whose page matches. */
export function isSessionPageFilter(filter: Filter): filter is Filter & { field: SessionPageField } {
  return (sessionPageFields as readonly string[]).includes(filter.field);
}

/** An `event_property` value split at its first `:`; other fields' values as they are. */
export function propertyParts(field: FilterField, value: string): { key?: string; value: string } {
  if (field !== 'event_property') return { value };
  const at = value.indexOf(':');
  return { key: value.slice(0, at), value: value.slice(at + 1) };
}

/** The values of an `is`/`is_not` filter: comma-separated, empty pieces ignored. */
export function multiValues(value: string): string[] {
  return value.split(',').filter((v) => v.length > 0);
}
