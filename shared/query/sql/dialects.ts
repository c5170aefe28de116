import { PAGE_BUCKETS_TABLE, PAGEVIEW_BUCKETS_TABLE, SESSION_FRAGMENTS_TABLE, VISITOR_DAYS_TABLE } from '../../events/derived-relations.js';
import type { Dialect } from './dialect.js';
import { sql, trusted } from './sql.js';

export const duckdbDialect: Dialect = {
  name: 'duckdb',
  eventsTable: trusted('events'),
  sessionFragmentsTable: trusted(SESSION_FRAGMENTS_TABLE),
  pageviewBucketsTable: trusted(PAGEVIEW_BUCKETS_TABLE),
  pageBucketsTable: trusted(PAGE_BUCKETS_TABLE),
  visitorDaysTable: trusted(VISITOR_DAYS_TABLE),
  bucketVisitor: 'visitor_key',
  wholeFragmentsHavePaths: true,
  materialized: trusted('MATERIALIZED '),
  argMinKeepNull: (x, by) => sql`arg_min_null(${x}, ${by})`,
  anyElement: (list, element, predicate) => sql`list_bool_or(list_transform(${list}, lambda ${element}: ${predicate}))`,
  listContains: (list, value) => sql`list_contains(${list}, ${value})`,
  jsonProperty: (json, key) => sql`map_extract_value(CAST(CAST(${json} AS JSON) AS MAP(VARCHAR, VARCHAR)), ${key})`,
  jsonKeys: (json) => sql`json_keys(${json})`,
  epochSeconds: (ts) => sql`(epoch_ms(${ts}) // 1000)`,
  integerDivide: (dividend, divisor) => sql`((${dividend}) // ${divisor})`,
  formatHour: (ts) => sql`strftime(${ts}, '%Y-%m-%d %H:00:00')`,
  formatTimestamp: (ts) => sql`strftime(${ts}, '%Y-%m-%d %H:%M:%S')`,
  isoDayOfWeek: (ts) => sql`isodow(${ts})`,
};


/** Glue tables of the derived relations (docs/STORAGE.md), each defaulting to the relation's own name. */
export interface DerivedTableNames {
  sessionsTable?: string;
  bucketsTable?: string;
  pagesTable?: string;
  visitorsTable?: string;
}

/**
 * Athena engine v3 speaks Trino. `table` is the stack's Glue table of the events, `derived` names those of the
 * derived relations; all are printed quoted as `"database"."table"`.
 */
export function athenaDialect(database: string, table: string, derived: DerivedTableNames = {}): Dialect {
  const {
    sessionsTable = SESSION_FRAGMENTS_TABLE,
    bucketsTable = PAGEVIEW_BUCKETS_TABLE,
    pagesTable = PAGE_BUCKETS_TABLE,
    visitorsTable = VISITOR_DAYS_TABLE,
  } = derived;
  const identifier = /^[a-z0-9_]+$/;
  if (![database, table, sessionsTable, bucketsTable, pagesTable, visitorsTable].every((name) => identifier.test(name))) throw new Error('Glue names must match [a-z0-9_]+');
  const quoted = (name: string) => trusted(`"${database}"."${name}"`);
  return {
    name: 'athena',
    eventsTable: quoted(table),
    sessionFragmentsTable: quoted(sessionsTable),
    pageviewBucketsTable: quoted(bucketsTable),
    pageBucketsTable: quoted(pagesTable),
    visitorDaysTable: quoted(visitorsTable),
    bucketVisitor: 'visitor_id',
    wholeFragmentsHavePaths: false,
    // Trino takes no hint: it plans each reference of a CTE on its own.
    materialized: trusted(''),
    argMinKeepNull: (x, by) => sql`min_by(${x}, ${by})`,
    anyElement: (list, element, predicate) => sql`any_match(${list}, ${element} -> ${predicate})`,
    listContains: (list, value) => sql`contains(${list}, ${value})`,
    jsonProperty: (json, key) => sql`element_at(CAST(json_parse(${json}) AS MAP(VARCHAR, VARCHAR)), ${key})`,
    jsonKeys: (json) => sql`map_keys(CAST(json_parse(${json}) AS MAP(VARCHAR, VARCHAR)))`,
    epochSeconds: (ts) => sql`date_diff('second', TIMESTAMP '1970-01-01 00:00:00', ${ts})`,
    integerDivide: (dividend, divisor) => sql`((${dividend}) / ${divisor})`,
    formatHour: (ts) => sql`date_format(${ts}, '%Y-%m-%d %H:00:00')`,
    formatTimestamp: (ts) => sql`date_format(${ts}, '%Y-%m-%d %H:%i:%s')`,
    isoDayOfWeek: (ts) => sql`day_of_week(${ts})`,
  };
}
