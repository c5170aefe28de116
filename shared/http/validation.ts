import type { z } from 'zod';
import { ValidationError, type ErrorDetail } from '../errors.js';

/** Parses `input` with `schema`, or throws a 400 whose details name every bad field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, root: 'body' | 'query' | 'path'): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = result.error.issues.flatMap((issue) => toDetails(issue, root));
  throw new ValidationError(details.map((d) => `${d.path}: ${d.message}`).join('; '), details);
}

function toDetails(issue: z.core.$ZodIssue, root: string): ErrorDetail[] {
  const base = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ path: join(base, key) || root, message: 'is not a known field' }));
  }
  if (issue.code === 'invalid_type' && issue.path.length === 0) {
    return [{ path: root, message: `must be a JSON ${issue.expected}` }];
  }
  return [{ path: base || root, message: issue.message }];
}

function join(base: string, key: string): string {
  return base ? `${base}.${key}` : key;
}
