import { endOfIgnored } from '../../shared/engines/athena-literals.js';

// Athena's documented rules for execution parameters, as the emulator enforces them: each `?` of a statement
// must sit in a WHERE clause (not in a SELECT list, a HAVING clause, an aggregate's FILTER, a JOIN's ON, ...),
// there must be exactly one value per `?`, and no value may be longer than 1024 characters. Values are SQL text
// that Athena puts in place of the `?`s, in order.

export const MAX_PARAMETER_LENGTH = 1024;

export class ParameterError extends Error {}

/** `sql` with its `?`s replaced by `values`, or a ParameterError saying which of Athena's rules it breaks. */
export function substituteParameters(sql: string, values: readonly string[]): string {
  let placeholders: ReturnType<typeof placeholderClauses>;
  try {
    placeholders = placeholderClauses(sql);
  } catch (error) {
    throw new ParameterError(`The query cannot be read: ${(error as Error).message}`);
  }
  if (placeholders.length !== values.length) {
    throw new ParameterError(
      `The query has ${placeholders.length} parameter placeholders but ${values.length} execution parameters were given`,
    );
  }
  const misplaced = placeholders.find((p) => p.clause !== 'WHERE');
  if (misplaced) {
    throw new ParameterError(
      `Execution parameters are supported only in WHERE clauses; a ? stands in ${misplaced.clause ?? 'no clause'} at offset ${misplaced.at}`,
    );
  }
  const tooLong = values.findIndex((v) => v.length > MAX_PARAMETER_LENGTH || v.length === 0);
  if (tooLong !== -1)
    throw new ParameterError(`Execution parameter ${tooLong + 1} must be 1 to ${MAX_PARAMETER_LENGTH} characters long`);
  let text = '';
  let from = 0;
  placeholders.forEach(({ at }, i) => {
    text += sql.slice(from, at) + values[i]!;
    from = at + 1;
  });
  return text + sql.slice(from);
}

const clauseWords = new Set([
  'SELECT',
  'FROM',
  'WHERE',
  'GROUP',
  'HAVING',
  'ORDER',
  'LIMIT',
  'OFFSET',
  'ON',
  'USING',
  'WINDOW',
  'VALUES',
  'UNION',
  'INTERSECT',
  'EXCEPT',
  'QUALIFY',
]);

/**
 * Each `?` of `sql` (outside quotes and comments) with the clause it belongs to: the last clause word at its own
 * parenthesis depth, else at the nearest enclosing depth that has one. The parentheses after FILTER or OVER open a
 * clause of their own, so `count(*) FILTER (WHERE x = ?)` counts as FILTER, not WHERE.
 */
export function placeholderClauses(sql: string): { at: number; clause: string | undefined }[] {
  const found: { at: number; clause: string | undefined }[] = [];
  const levels: { clause: string | undefined; sticky: boolean }[] = [{ clause: undefined, sticky: false }];
  let lastWord = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const skipped = endOfIgnored(sql, i);
    if (skipped !== i) {
      // A quoted run ends a word (`FILTER` stays the last word across a comment, not across a string).
      if (c === "'" || c === '"') lastWord = '';
      i = skipped;
    } else if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i))![0];
      const upper = word.toUpperCase();
      const level = levels[levels.length - 1]!;
      if (clauseWords.has(upper) && !level.sticky) level.clause = upper;
      lastWord = upper;
      i += word.length;
    } else {
      if (c === '(')
        levels.push(
          lastWord === 'FILTER' || lastWord === 'OVER'
            ? { clause: lastWord, sticky: true }
            : { clause: undefined, sticky: false },
        );
      else if (c === ')' && levels.length > 1) levels.pop();
      else if (c === '?') found.push({ at: i, clause: levels.findLast((level) => level.clause !== undefined)?.clause });
      if (!/\s/.test(c)) lastWord = '';
      i += 1;
    }
  }
  return found;
}
