// How Athena writes a result cell: every value as text, in the forms of Trino's own text rendering. Trino's HTTP
// protocol sends JSON (numbers, booleans, arrays), so each value is turned back into that text here.

/** Athena names a column's type by its base name: `varchar`, `bigint`, `timestamp`, `array`, `decimal`, ... */
export function athenaColumnType(trinoType: string): string {
  return trinoType.replace(/\(.*$/, '');
}

/** One cell as Athena prints it; undefined for NULL (Athena omits VarCharValue). */
export function athenaText(value: unknown, trinoType: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    const element = /^array\((.*)\)$/.exec(trinoType)?.[1] ?? 'varchar';
    return `[${value.map((v) => athenaText(v, element) ?? 'null').join(', ')}]`;
  }
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}=${athenaText(v, 'varchar') ?? 'null'}`)
      .join(', ')}}`;
  }
  // Numbers print in their shortest round-trip form, which reads back to the same double as Trino's.
  return String(value);
}
