import * as z from 'zod';
import { isCalendarDate } from '../time/calendar-date.js';
import { EARLIEST_RANGE_DAY, presets } from '../time/date-range.js';
import { isValidTimeZone } from '../time/time-zone.js';

/**
 * The longest path parameter (an event name, a property key), and of a visitor id: the importer refuses longer
 * values (shared/events/event-validation.ts), so every stored name and id is one the API can be asked about.
 */
export const MAX_PATH_SEGMENT_LENGTH = 512;
export const MAX_VISITOR_ID_LENGTH = 256;
/** Names no URL path can carry as a segment: clients and gateways resolve them as "this" and "parent" folders. */
export const UNADDRESSABLE_SEGMENTS: ReadonlySet<string> = new Set(['.', '..']);

// Field schemas shared by the endpoints. JSON bodies are typed strictly (no coercion); query strings are
// parsed from text by the `query*` helpers.

export const domainSchema = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, 'must be a lower-case domain name');

// `.meta()` adds what a refinement checks but zod cannot express to the OpenAPI document (shared/http/openapi.ts),
// as far as JSON Schema can say it; the rest (a real calendar date, a known zone) is in the descriptions.
export const calendarDateSchema = z
  .string()
  .max(10, 'must be a date in the form YYYY-MM-DD')
  .refine(isCalendarDate, 'must be a real date in the form YYYY-MM-DD')
  .meta({ format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'a real calendar date, YYYY-MM-DD' });

export const timeZoneSchema = z
  .string()
  .max(64, 'must be an IANA time zone name, e.g. Europe/Berlin')
  .refine(isValidTimeZone, 'must be an IANA time zone name, e.g. Europe/Berlin')
  .meta({ minLength: 1, description: 'an IANA time zone name, e.g. Europe/Berlin; default UTC' });

/** Names for generated clients, in `presets` order (`7d` cannot be an identifier: generators made `VALUE_0` of it). */
const presetNames: Record<(typeof presets)[number], string> = {
  '7d': 'LAST_7_DAYS',
  '14d': 'LAST_14_DAYS',
  '30d': 'LAST_30_DAYS',
  '90d': 'LAST_90_DAYS',
  '12mo': 'LAST_12_MONTHS',
  all: 'ALL_TIME',
};

export const presetSchema = z
  .enum(presets, { error: `must be one of ${presets.join(', ')}` })
  .meta({ id: 'DatePreset', 'x-enum-varnames': presets.map((p) => presetNames[p]) });

/**
 * The dates a request range may name. No analytics data lies outside them, and the cost of a range grows with
 * its length: its time-zone offsets are computed a day at a time (time-zone.ts) and each DST change adds a branch
 * to the SQL, so an unbounded range in a DST zone would cost seconds of CPU and a huge statement.
 */
export const RANGE_DATE_BOUNDS = [EARLIEST_RANGE_DAY, '2099-12-31'] as const;

export const rangeDateSchema = calendarDateSchema.refine(
  (d) => d >= RANGE_DATE_BOUNDS[0] && d <= RANGE_DATE_BOUNDS[1],
  `must lie between ${RANGE_DATE_BOUNDS[0]} and ${RANGE_DATE_BOUNDS[1]}`,
);

export const dateRangeSchema = z
  .union(
    [
      presetSchema,
      z.tuple([rangeDateSchema, rangeDateSchema]).meta({
        minItems: 2,
        maxItems: 2,
        description: `[start, end], both days included, start not after end, between ${RANGE_DATE_BOUNDS[0]} and ${RANGE_DATE_BOUNDS[1]}`,
      }),
    ],
    {
      error: `must be one of ${presets.join(', ')} or [start, end] dates`,
    },
  )
  .refine((r) => typeof r === 'string' || r[0] <= r[1], 'start must not be after end');

// In a `u` regex a surrogate pair is one code point, so this matches only the unpaired halves.
const loneSurrogate = /\p{Surrogate}/u;

/**
 * Free text a client sends as data (filter values, visitor ids, path segments, titles): no NUL and no broken
 * UTF-16. Athena refuses both (athena-literals.ts) and neither survives DynamoDB or DuckDB unchanged, so every
 * engine answers the same 400 instead of diverging.
 */
export function dataText(schema: z.ZodString): z.ZodString {
  return schema
    .refine((v) => !v.includes('\u0000'), 'must not contain NUL characters')
    .refine((v) => !loneSurrogate.test(v), 'must be valid Unicode text (no unpaired surrogates)');
}

export const visitorIdSchema = dataText(z.string().min(1).max(MAX_VISITOR_ID_LENGTH));

/** A whole number in a query string, within [min, max]. */
export function queryInt(min: number, max: number) {
  return z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .meta({ type: 'integer', minimum: min, maximum: max });
}

/** `true`/`false` (also `1`/`0`) in a query string. */
export const queryBool = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');

/** A path parameter, already percent-decoded (HTTP APIs decode the path before routing; so does the local server). */
export const pathSegment = dataText(z.string().min(1).max(MAX_PATH_SEGMENT_LENGTH));

/** Annotation ids: the ids this API issues are UUIDs; anything longer than a key DynamoDB can hold is a 400. */
export const annotationIdSchema = dataText(z.string().min(1).max(128, 'must be at most 128 characters'));

/**
 * `items` with each value once, in the order first seen: a filter given twice means what it means once (the
 * contract allows it), so the request is planned, cached and answered as if it were given once.
 */
export function withoutRepeats<T>(items: readonly T[]): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = JSON.stringify(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** `asc` or `desc`, one schema named for generated clients. */
export const sortOrderSchema = z.enum(['asc', 'desc'], { error: 'must be asc or desc' }).meta({ id: 'SortOrder' });
