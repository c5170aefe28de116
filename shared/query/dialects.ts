import type { Dialect } from './dialect.js';
import { sql, trusted } from './sql.js';

export const duckdbDialect: Dialect = {
  name: 'duckdb',
  eventsTable: trusted('events'),
  argMinKeepNull: (x, by) => sql`arg_min_null(${x}, ${by})`,
  jsonProperty: (json, key) => sql`map_extract_value(CAST(CAST(${json} AS JSON) AS MAP(VARCHAR, VARCHAR)), ${key})`,
  jsonKeys: (json) => sql`json_keys(${json})`,
  formatHour: (ts) => sql`strftime(${ts}, '%Y-%m-%d %H:00:00')`,
  formatTimestamp: (ts) => sql`strftime(${ts}, '%Y-%m-%d %H:%M:%S')`,
  isoDayOfWeek: (ts) => sql`isodow(${ts})`,
};

/** Athena engine v3 speaks Trino. `table` is the quoted `"database"."table"` of the stack's Glue table. */
export function athenaDialect(database: string, table: string): Dialect {
  const identifier = /^[a-z0-9_]+$/;
  if (!identifier.test(database) || !identifier.test(table)) throw new Error('Glue names must match [a-z0-9_]+');
  return {
    name: 'athena',
    eventsTable: trusted(`"${database}"."${table}"`),
    argMinKeepNull: (x, by) => sql`min_by(${x}, ${by})`,
    jsonProperty: (json, key) => sql`element_at(CAST(json_parse(${json}) AS MAP(VARCHAR, VARCHAR)), ${key})`,
    jsonKeys: (json) => sql`map_keys(CAST(json_parse(${json}) AS MAP(VARCHAR, VARCHAR)))`,
    formatHour: (ts) => sql`date_format(${ts}, '%Y-%m-%d %H:00:00')`,
    formatTimestamp: (ts) => sql`date_format(${ts}, '%Y-%m-%d %H:%i:%s')`,
    isoDayOfWeek: (ts) => sql`day_of_week(${ts})`,
  };
}
