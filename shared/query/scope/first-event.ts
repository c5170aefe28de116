import type { DomainDays } from '../../store/domain-days-repo.js';
import type { SqlQuery } from '../sql/sql.js';
import type { SqlTarget } from '../sql/target.js';
import { scopeCondition } from './event-scope.js';
import { print, sql, trusted } from '../sql/sql.js';

/** The first event time of a domain (UTC, `YYYY-MM-DD HH:MM:SS`), for the `all` preset, within the domain's days when known. */
export function printFirstEvent(
  domain: string,
  isDev: boolean,
  days: DomainDays | undefined,
  { dialect, catalog }: SqlTarget,
): SqlQuery {
  return print(
    sql`SELECT ${dialect.formatTimestamp(trusted('min(ts)'))} AS first_ts FROM ${catalog.tables.events} WHERE ${scopeCondition({ domain, isDev, ...(days ? { days } : {}) })}`,
  );
}
