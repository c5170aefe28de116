import type { SqlQuery } from '../../engines/engine.js';
import type { Dialect } from '../sql/dialect.js';
import { scopeCondition } from './event-scope.js';
import { print, sql, trusted } from '../sql/sql.js';

/** The first event time of a domain (UTC, `YYYY-MM-DD HH:MM:SS`), for the `all` preset. */
export function printFirstEvent(dialect: Dialect, domain: string, isDev: boolean): SqlQuery {
  return print(sql`SELECT ${dialect.formatTimestamp(trusted('min(ts)'))} AS first_ts FROM ${dialect.eventsTable} WHERE ${scopeCondition({ domain, isDev })}`);
}
