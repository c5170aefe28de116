import { Trino } from 'trino-client';

/** Runs one statement on the Trino server at `url` to its end; its error, if any, is thrown with Trino's message. */
export async function runToCompletion(url: string, statement: string): Promise<unknown[][]> {
  const trino = Trino.create({ server: url, catalog: 'hive', source: 'analytics-query-api' });
  const rows: unknown[][] = [];
  for await (const page of await trino.query({
    query: statement,
    user: 'admin',
    extraHeaders: { 'X-Trino-Time-Zone': 'UTC' },
  })) {
    if (page.error) throw new Error(`Trino: ${page.error.message}`);
    rows.push(...(page.data ?? []));
  }
  return rows;
}
