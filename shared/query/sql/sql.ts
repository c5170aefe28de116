// The only way SQL text is put together. A value always becomes a `?` placeholder with a typed parameter;
// raw text enters only through `trusted()`, which takes identifiers and keywords from the allow-lists in this
// folder, never request data. `print()` joins fragments into one query for an engine.

/** A value bound to a `?` placeholder, typed so each engine binds it as the column's type. */
export type SqlParam =
  | { type: 'string'; value: string }
  | { type: 'int'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'date'; value: string }
  | { type: 'timestamp'; value: Date };

/** A printed statement: its text with `?` placeholders and their values in order. */
export interface SqlQuery {
  sql: string;
  params: SqlParam[];
}

export class Sql {
  constructor(readonly parts: readonly (string | SqlParam)[]) {}
}

export type SqlLike = Sql | SqlParam;

/** Template tag: `${...}` may hold Sql fragments or parameters (`str()`, `int()` ...), nothing else. */
export function sql(strings: TemplateStringsArray, ...values: SqlLike[]): Sql {
  const parts: (string | SqlParam)[] = [];
  strings.forEach((text, i) => {
    parts.push(text);
    if (i < values.length) {
      const value = values[i]!;
      if (value instanceof Sql) parts.push(...value.parts);
      else parts.push(value);
    }
  });
  return new Sql(parts);
}

/** Allow-listed SQL text (identifiers, keywords, function names) chosen by code. Never request data. */
export function trusted(text: string): Sql {
  return new Sql([text]);
}

export function join(fragments: readonly Sql[], separator = ', '): Sql {
  const parts: (string | SqlParam)[] = [];
  fragments.forEach((fragment, i) => {
    if (i > 0) parts.push(separator);
    parts.push(...fragment.parts);
  });
  return new Sql(parts);
}

/** An integer printed into the text (LIMIT/OFFSET, offsets we computed); refuses anything but a safe integer. */
export function integer(value: number): Sql {
  if (!Number.isSafeInteger(value)) throw new Error('integer() takes safe integers only');
  return trusted(String(value));
}

export const str = (value: string): SqlParam => ({ type: 'string', value });
export const int = (value: number): SqlParam => ({ type: 'int', value });
export const bool = (value: boolean): SqlParam => ({ type: 'bool', value });
export const date = (value: string): SqlParam => ({ type: 'date', value });
export const timestamp = (value: Date): SqlParam => ({ type: 'timestamp', value });

export function print(fragment: Sql): SqlQuery {
  let text = '';
  const params: SqlParam[] = [];
  for (const part of fragment.parts) {
    if (typeof part === 'string') text += part;
    else {
      text += '?';
      params.push(part);
    }
  }
  return { sql: text.replace(/[ \t]*\n\s*/g, '\n').trim(), params };
}
