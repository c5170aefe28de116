import { athenaCatalog, localCatalog, type DerivedTableNames, type StoreCatalog } from './catalog.js';
import type { Dialect } from './dialect.js';
import { duckdbDialect, trinoDialect } from './dialects.js';

// What a printer writes for: the engine's spelling and its store's relations. Every engine has one.
export interface SqlTarget {
  readonly dialect: Dialect;
  readonly catalog: StoreCatalog;
}

export const localTarget: SqlTarget = { dialect: duckdbDialect, catalog: localCatalog };

/** Athena engine v3 speaks Trino, over the stack's Glue tables. */
export function athenaTarget(
  database: string,
  table: string,
  derived: DerivedTableNames = {},
  location?: string,
): SqlTarget {
  return { dialect: trinoDialect, catalog: athenaCatalog(database, table, derived, location) };
}
