import type { Sql, SqlLike } from './sql.js';

// How DuckDB and Athena (Trino) spell what they both can do, and nothing else: facts about the store live in its
// catalog (catalog.ts). The printers write one statement shape and call these for the few functions whose names
// or arguments differ.
export interface Dialect {
  readonly name: 'duckdb' | 'athena';
  /**
   * What a statement costs, the one difference planners choose shapes by (as Kysely's adapters name what a dialect
   * supports): 'in-process' (DuckDB: a second statement or a second read of a relation costs only its time) or
   * 'billed' (Athena: each statement waits in a queue and bills the bytes it reads, at least 10 MB).
   */
  readonly cost: 'in-process' | 'billed';
  /**
   * How a distinct count beside a sum is cheaper written: `inline` (`count(DISTINCT v), sum(x)` in one aggregation:
   * DuckDB) or `pre-grouped` (grouped by `v` first, then counted: Trino, which otherwise marks the distinct rows in a
   * pass of their own).
   */
  readonly distinctBesideSum: 'inline' | 'pre-grouped';
  /** Prefix of a CTE body read more than once that is cheaper computed once: `MATERIALIZED ` or nothing. */
  readonly materialized: Sql;
  /** `x` of the row with the smallest `by`, keeping NULL when that row's `x` is NULL. */
  argMinKeepNull(x: Sql, by: Sql): Sql;
  /** `x` of the row with the largest `by`, keeping NULL when that row's `x` is NULL. Both skip rows whose `by` is NULL. */
  argMaxKeepNull(x: Sql, by: Sql): Sql;
  /** Whether some element of the list `list` satisfies `predicate`, in which `element` names the element. */
  anyElement(list: Sql, element: Sql, predicate: Sql): Sql;
  /** A list of the one string `value` where `keep` holds, else an empty list of strings. */
  stringListOf(value: Sql, keep: Sql): Sql;
  /** Aggregate: the number of distinct elements over the lists `lists` of a group's rows. */
  distinctElementCount(lists: Sql): Sql;
  /** Whether the list `list` holds `value` (cheaper than anyElement where an equality is all it takes). */
  listContains(list: Sql, value: SqlLike): Sql;
  /** Value of key `key` in the JSON object text `json`, NULL when absent. */
  jsonProperty(json: Sql, key: SqlLike): Sql;
  /** The keys of the JSON object text `json`, as an array. */
  jsonKeys(json: Sql): Sql;
  /** Whole seconds from 1970-01-01 00:00 to a timestamp at or after it, as an integer. */
  epochSeconds(ts: Sql): Sql;
  /**
   * The exact sum of an integer column, in a type wide enough for any sum a store can hold (the column is BIGINT; a
   * sum of BIGINTs may leave its range). The engine reads it back as the nearest double (SqlValue numbers).
   */
  exactSum(integer: Sql): Sql;
  /** Integer division of two non-negative integers. */
  integerDivide(dividend: Sql, divisor: Sql): Sql;
  /** `YYYY-MM-DD HH:00:00` of a timestamp. */
  formatHour(ts: Sql): Sql;
  /** `YYYY-MM-DD HH:MM:SS` of a timestamp. */
  formatTimestamp(ts: Sql): Sql;
  /** ISO day of week: 1 = Monday ... 7 = Sunday. */
  isoDayOfWeek(ts: Sql): Sql;
}
