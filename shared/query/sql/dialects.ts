import type { Dialect } from './dialect.js';
import { sql, trusted } from './sql.js';

export const duckdbDialect: Dialect = {
  name: 'duckdb',
  cost: 'in-process',
  distinctBesideSum: 'inline',
  materialized: trusted('MATERIALIZED '),
  argMinKeepNull: (x, by) => sql`arg_min_null(${x}, ${by})`,
  argMaxKeepNull: (x, by) => sql`arg_max_null(${x}, ${by})`,
  anyElement: (list, element, predicate) => sql`list_bool_or(list_transform(${list}, lambda ${element}: ${predicate}))`,
  stringListOf: (value, keep) => sql`CASE WHEN ${keep} THEN [${value}] ELSE [] END`,
  distinctElementCount: (lists) => sql`length(list_distinct(flatten(list(${lists}))))`,
  listContains: (list, value) => sql`list_contains(${list}, ${value})`,
  // A JSON Pointer to the key (`~` and `/` escaped as RFC 6901 says) reads the one value without turning the whole
  // object into a map first. The stored objects hold only strings (shared/events/event-validation.ts).
  jsonProperty: (json, key) => sql`json_extract_string(${json}, '/' || replace(replace(${key}, '~', '~0'), '/', '~1'))`,
  jsonKeys: (json) => sql`json_keys(${json})`,
  epochSeconds: (ts) => sql`(epoch_ms(${ts}) // 1000)`,
  // DuckDB sums BIGINT as HUGEINT (128 bits), read back as a JS bigint.
  exactSum: (integer) => sql`sum(${integer})`,
  integerDivide: (dividend, divisor) => sql`((${dividend}) // ${divisor})`,
  formatHour: (ts) => sql`strftime(${ts}, '%Y-%m-%d %H:00:00')`,
  formatTimestamp: (ts) => sql`strftime(${ts}, '%Y-%m-%d %H:%M:%S')`,
  isoDayOfWeek: (ts) => sql`isodow(${ts})`,
};

/** Trino's spelling, which Athena engine v3 speaks. */
export const trinoDialect: Dialect = {
  name: 'athena',
  cost: 'billed',
  distinctBesideSum: 'pre-grouped',
  // Trino takes no hint: it plans each reference of a CTE on its own.
  materialized: trusted(''),
  argMinKeepNull: (x, by) => sql`min_by(${x}, ${by})`,
  argMaxKeepNull: (x, by) => sql`max_by(${x}, ${by})`,
  anyElement: (list, element, predicate) => sql`any_match(${list}, ${element} -> ${predicate})`,
  stringListOf: (value, keep) => sql`CASE WHEN ${keep} THEN ARRAY[${value}] ELSE CAST(ARRAY[] AS ARRAY(VARCHAR)) END`,
  distinctElementCount: (lists) => sql`cardinality(array_distinct(flatten(array_agg(${lists}))))`,
  listContains: (list, value) => sql`contains(${list}, ${value})`,
  jsonProperty: (json, key) => sql`element_at(CAST(json_parse(${json}) AS MAP(VARCHAR, VARCHAR)), ${key})`,
  jsonKeys: (json) => sql`map_keys(CAST(json_parse(${json}) AS MAP(VARCHAR, VARCHAR)))`,
  epochSeconds: (ts) => sql`date_diff('second', TIMESTAMP '1970-01-01 00:00:00', ${ts})`,
  // Trino sums BIGINT as BIGINT and fails past 2^63 - 1; DECIMAL(38,0) holds any sum of BIGINTs a store can hold.
  exactSum: (integer) => sql`sum(CAST(${integer} AS DECIMAL(38, 0)))`,
  integerDivide: (dividend, divisor) => sql`((${dividend}) / ${divisor})`,
  formatHour: (ts) => sql`date_format(${ts}, '%Y-%m-%d %H:00:00')`,
  formatTimestamp: (ts) => sql`date_format(${ts}, '%Y-%m-%d %H:%i:%s')`,
  isoDayOfWeek: (ts) => sql`day_of_week(${ts})`,
};
