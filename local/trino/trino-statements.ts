import { Trino } from 'trino-client';
import type { TrinoAccess } from './trino-server.js';

/** Runs one statement on the Trino server of `access` to its end; its error, if any, is thrown with Trino's message. */
export async function runToCompletion(access: TrinoAccess, statement: string): Promise<unknown[][]> {
  const { user, ...connection } = access;
  const trino = Trino.create({ ...connection, catalog: 'hive', source: 'analytics-query-api' });
  const rows: unknown[][] = [];
  for await (const page of await trino.query({
    query: statement,
    user,
    // The token goes with every call of the client (Trino.create's extraHeaders).
    extraHeaders: { 'X-Trino-Time-Zone': 'UTC' },
  })) {
    if (page.error) throw new Error(`Trino: ${page.error.message}`);
    rows.push(...(page.data ?? []));
  }
  return rows;
}
