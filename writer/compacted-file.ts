import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { pathLiteral } from '../shared/engines/duckdb-engine.js';
import type { DerivedFolder } from '../shared/events/derived-relations.js';
import { writeDerived, type WriterKnowledge } from './derived-writer.js';
import type { StoreCodecs } from './parquet-codec.js';
import { writeEventFile, type EventFileStore } from './event-file-layout.js';

// The rewrite at the heart of compaction (docs/STORAGE.md), for the local store (local/store/compaction.ts) and S3's
// upkeep (ingest/s3-upkeep.ts): many event files of one partition become one, with its derived files made from it.

/**
 * Writes the event files `sources` as one file in the event files' order (event-file-layout.ts),
 * `<dirs.events>/<name>`, and its derived files beside it under `dirs` (the same relative name): the rewrite of one
 * partition, laid out as `store` says; `known` as
 * writeDerived takes it.
 */
export async function writeCompacted(
  connection: DuckDBConnection,
  sources: string[],
  name: string,
  dirs: Record<'events' | DerivedFolder, string>,
  store: EventFileStore,
  codecs: StoreCodecs,
  known?: WriterKnowledge,
): Promise<void> {
  await mkdir(dirname(join(dirs.events, name)), { recursive: true });
  await writeEventFile(connection, sources, join(dirs.events, name), codecs.events, store, codecs.zstdLevel);
  await writeDerived(
    connection,
    `read_parquet(${pathLiteral(join(dirs.events, name))})`,
    name,
    dirs,
    codecs,
    known ? { known } : {},
  );
}
