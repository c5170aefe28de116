import type { z } from 'zod';
import { ValidationError, type ErrorDetail } from '../errors.js';

/** A 400 names at most this many problems, each path cut to MAX_PATH_LENGTH: its size never grows with the request's. */
export const MAX_DETAILS = 20;
const MAX_PATH_LENGTH = 200;

/** Parses `input` with `schema`, or throws a 400 whose details name the bad fields (the first MAX_DETAILS). */
export function parseInput<S extends z.ZodType>(
  schema: S,
  input: unknown,
  root: 'body' | 'query' | 'path',
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const known = 'shape' in schema ? Object.keys((schema as unknown as { shape: object }).shape) : undefined;
  const all = result.error.issues.flatMap((issue) => toDetails(issue, root, known));
  const details = all
    .slice(0, MAX_DETAILS)
    .map((d) => ({ ...d, path: d.path.length > MAX_PATH_LENGTH ? `${d.path.slice(0, MAX_PATH_LENGTH)}…` : d.path }));
  const more = all.length > details.length ? `; and ${all.length - details.length} more` : '';
  throw new ValidationError(details.map((d) => `${d.path}: ${d.message}`).join('; ') + more, details);
}

/**
 * A zod issue as the details of a 400: an unknown field at the top names the fields the endpoint takes (`known`), a
 * missing one says it is required, a wrong type at the top says what JSON is expected.
 */
function toDetails(issue: z.core.$ZodIssue, root: string, known: string[] | undefined): ErrorDetail[] {
  const base = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const accepted = issue.path.length === 0 && known ? ` (this endpoint takes ${known.join(', ')})` : '';
    return issue.keys.map((key) => ({ path: join(base, key) || root, message: `is not a known field${accepted}` }));
  }
  if (issue.code === 'invalid_type' && issue.path.length === 0) {
    return [{ path: root, message: `must be a JSON ${issue.expected}` }];
  }
  if (issue.code === 'invalid_type' && / received undefined$/.test(issue.message)) {
    return [{ path: base, message: `is required (a ${issue.expected})` }];
  }
  return [{ path: base || root, message: issue.message }];
}

function join(base: string, key: string): string {
  return base ? `${base}.${key}` : key;
}
