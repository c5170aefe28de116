import { Trino } from 'trino-client';
import type { TrinoAccess } from './trino-server.js';

/** Runs one statement on the Trino server of `access` to its end; its error, if any, is thrown with Trino's message. */
export async function runToCompletion(access: TrinoAccess, statement: string): Promise<unknown[][]> {
  return (await runStatement(access, statement)).rows;
}

/**
 * Runs one statement to its end, in `schema` of the catalog `hive` with the session properties given
 * (`hive.parquet_small_file_threshold`, ...); its rows and Trino's query id, for its query info (trino-query-info.ts).
 */
export async function runStatement(
  access: TrinoAccess,
  statement: string,
  options: { session?: Record<string, string>; schema?: string } = {},
): Promise<{ queryId: string; rows: unknown[][] }> {
  const { user, ...connection } = access;
  const trino = Trino.create({
    ...connection,
    catalog: 'hive',
    ...(options.schema ? { schema: options.schema } : {}),
    source: 'analytics-query-api',
    session: options.session ?? {},
  });
  const rows: unknown[][] = [];
  let queryId = '';
  for await (const page of await trino.query({
    query: statement,
    user,
    // The token goes with every call of the client (Trino.create's extraHeaders).
    extraHeaders: { 'X-Trino-Time-Zone': 'UTC' },
  })) {
    if (page.error) throw new Error(`Trino: ${page.error.message}`);
    queryId = page.id;
    rows.push(...(page.data ?? []));
  }
  return { queryId, rows };
}
