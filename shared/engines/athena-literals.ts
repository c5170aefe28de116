import { EngineValueError } from './engine-errors.js';
import type { SqlParam } from '../query/sql/sql.js';

// The one place a value becomes Trino SQL text: every value of an Athena statement passes through `trinoLiteral`
// and is written into the statement in place of its `?`, and nothing else in the project writes a quoted value.
// Athena's execution parameters are not used: Athena takes them in WHERE clauses only, while our statements
// carry values in SELECT lists, FILTER and HAVING clauses too; and with every value in the text, result reuse
// (which matches on the text) can never answer one domain with another's rows. Keep this file small enough to
// audit at a glance.

const datePattern = /^\d{4}-\d{2}-\d{2}$/;
// In a `u` regex a surrogate pair is one code point, so this matches only the unpaired halves.
const loneSurrogate = /\p{Surrogate}/u;
const timestampPattern = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;

/**
 * The Trino literal for a parameter.
 * - string: `'...'` with every `'` doubled; that is the only escape inside a Trino string literal (backslash
 *   is an ordinary character). NUL and broken UTF-16 (lone surrogates) are refused with a 400: no real domain,
 *   path or property contains them, and they do not survive the trip through JSON and Athena unchanged.
 * - int: a safe integer's decimal digits; bool: `true` / `false`.
 * - date: `DATE 'YYYY-MM-DD'` after checking it is a real calendar date.
 * - timestamp: `TIMESTAMP 'YYYY-MM-DD HH:MM:SS.mmm'` of the instant in UTC (the stored `ts` is UTC).
 * Anything else throws a plain Error (a bug in our code, answered as a 500).
 */
export function trinoLiteral(param: SqlParam): string {
  switch (param.type) {
    case 'string': {
      const value: unknown = param.value;
      if (typeof value !== 'string') throw new Error('string parameter is not a string');
      if (value.includes('\u0000')) throw new EngineValueError('Text values must not contain NUL characters');
      if (loneSurrogate.test(value)) throw new EngineValueError('Text values must be valid Unicode');
      return `'${value.replaceAll("'", "''")}'`;
    }
    case 'int':
      if (!Number.isSafeInteger(param.value)) throw new Error('int parameter is not a safe integer');
      return String(param.value);
    case 'bool':
      if (typeof param.value !== 'boolean') throw new Error('bool parameter is not a boolean');
      return param.value ? 'true' : 'false';
    case 'date':
      if (typeof param.value !== 'string' || !datePattern.test(param.value) || !isCalendarDay(param.value)) {
        throw new Error('date parameter is not a YYYY-MM-DD calendar date');
      }
      return `DATE '${param.value}'`;
    case 'timestamp': {
      const value: unknown = param.value;
      const text =
        value instanceof Date && !Number.isNaN(value.getTime())
          ? value.toISOString().slice(0, 23).replace('T', ' ')
          : '';
      if (!timestampPattern.test(text)) throw new Error('timestamp parameter is not a Date within years 0000-9999');
      return `TIMESTAMP '${text}'`;
    }
    default:
      throw new Error(`unknown parameter type ${(param as { type: unknown }).type}`);
  }
}

/** `sql` with each `?` placeholder replaced by the literal of its parameter, in order. */
export function inlineParameters(sql: string, params: readonly SqlParam[]): string {
  const literals = params.map(trinoLiteral);
  const placeholders = findPlaceholders(sql);
  if (placeholders.length !== literals.length) {
    throw new Error(`query has ${placeholders.length} placeholders but ${literals.length} parameters`);
  }
  let text = '';
  let from = 0;
  placeholders.forEach((at, i) => {
    text += sql.slice(from, at) + literals[i]!;
    from = at + 1;
  });
  return text + sql.slice(from);
}

/**
 * Offsets of the `?` placeholders in `sql`, skipping any `?` inside a 'string literal', a "quoted identifier",
 * a -- line comment or a block comment. Our printed SQL has no `?` in those today; this keeps it that way
 * if a trusted fragment ever gains one.
 */
export function findPlaceholders(sql: string): number[] {
  const found: number[] = [];
  let i = 0;
  while (i < sql.length) {
    const next = endOfIgnored(sql, i);
    if (next !== i) {
      i = next;
      continue;
    }
    if (sql[i] === '?') found.push(i);
    i += 1;
  }
  return found;
}

/**
 * Index just past the 'string literal', "quoted identifier", -- line comment or block comment that starts at `i`,
 * or `i` itself when none starts there: what every reader of placeholders skips.
 */
export function endOfIgnored(sql: string, i: number): number {
  const c = sql[i];
  if (c === "'" || c === '"') return endOfQuoted(sql, i, c);
  if (c === '-' && sql[i + 1] === '-') {
    const newline = sql.indexOf('\n', i);
    return newline === -1 ? sql.length : newline + 1;
  }
  if (c === '/' && sql[i + 1] === '*') {
    const close = sql.indexOf('*/', i + 2);
    if (close === -1) throw new Error('unterminated block comment in SQL');
    return close + 2;
  }
  return i;
}

/** Index just past the quoted run that opens at `start`; a doubled quote is an escaped quote, not the end. */
function endOfQuoted(sql: string, start: number, quote: string): number {
  let i = start + 1;
  for (;;) {
    const close = sql.indexOf(quote, i);
    if (close === -1) throw new Error('unterminated quoted text in SQL');
    if (sql[close + 1] !== quote) return close + 1;
    i = close + 2;
  }
}

function isCalendarDay(value: string): boolean {
  const ms = Date.parse(`${value}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().startsWith(value);
}
