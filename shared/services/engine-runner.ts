import type { QueryEngine, SqlRow } from '../engines/engine.js';
import type { SqlQuery } from '../query/sql/sql.js';
import { analyticsEngine } from '../engines/registry.js';
import { requestLogger } from '../log.js';
import { isAnswerCacheOn } from '../config.js';
import { printFirstEvent } from '../query/scope/first-event.js';
import { readDomainDays } from '../store/domain-days-repo.js';
import { hiddenFiles } from '../store/file-states-repo.js';
import { answerKey, readAnswer, writeAnswer } from '../store/answer-cache-repo.js';
import { withExcludedFiles, withStoreLayout } from '../query/sql/catalog.js';
import type { SqlTarget } from '../query/sql/target.js';

// Runs printed queries on the installed engine and keeps the figures `meta` reports: the time spent in the
// engine (measured here, around the engine calls) and, on Athena, the bytes scanned. Where the domain's data has a
// version, a statement's rows are kept in the answer cache (shared/store/answer-cache-repo.ts) and a repeat of the
// same statement over the same version starts nothing on the engine.

export class EngineRunner {
  private elapsedMs = 0;
  private scanned: number | undefined;

  private constructor(
    private readonly engine: QueryEngine,
    /** What this runner's queries are printed for: the engine's target, less the files upkeep is replacing. */
    readonly target: SqlTarget,
    /** The version of the data this runner's queries read; undefined: nothing is cached. */
    private readonly dataVersion: string | undefined,
  ) {}

  /**
   * A runner for queries of `domain`. On a store whose files upkeep replaces in place (S3), it first reads which
   * files the domain's queries must leave out (one DynamoDB read), so no query sees a partition's rows twice; the
   * same read gives the domain's data version and the layout of its files, which decides what the plans may read.
   */
  static async forDomain(domain: string, engine: QueryEngine = analyticsEngine()): Promise<EngineRunner> {
    const { target } = engine;
    const cache = isAnswerCacheOn();
    const engineVersion = cache ? engine.dataVersion?.() : undefined;
    if (!target.catalog.filesReplacedInPlace) return new EngineRunner(engine, target, engineVersion);
    const hidden = await hiddenFiles(domain);
    const versions = [`files:${hidden.version}`, ...(engineVersion === undefined ? [] : [engineVersion])];
    const version = cache ? versions.join(' ') : undefined;
    const catalog = withExcludedFiles(withStoreLayout(target.catalog, hidden.layout), hidden, domain);
    return new EngineRunner(engine, { ...target, catalog }, version);
  }

  /** A runner of its own on the same engine and files, for work that outlives the request: its time is not the request's. */
  fork(): EngineRunner {
    return new EngineRunner(this.engine, this.target, this.dataVersion);
  }

  /** What caches of facts about the engine's store are kept per (services/store-shape.ts). */
  get cacheScope(): object {
    return this.engine;
  }

  /** Runs one query; logs one `query` line with its time, rows and (on Athena) bytes, never its values. */
  async rows(query: SqlQuery): Promise<SqlRow[]> {
    const started = performance.now();
    let outcome: { rows: number; bytes_scanned?: number; cached?: true } | undefined;
    const key =
      this.dataVersion === undefined ? undefined : answerKey(this.target.dialect.name, this.dataVersion, query);
    try {
      const cached = key === undefined ? undefined : await readAnswer(key);
      if (cached) {
        // Nothing was scanned: on an engine that bills its statements the request's bytes say so.
        if (this.engine.billedPerStatement) this.scanned = this.scanned ?? 0;
        outcome = { rows: cached.length, cached: true };
        return cached;
      }
      const { rows, stats } = await this.engine.run(query);
      if (key !== undefined) await writeAnswer(key, rows);
      if (stats.bytesScanned !== undefined) this.scanned = (this.scanned ?? 0) + stats.bytesScanned;
      outcome = {
        rows: rows.length,
        ...(stats.bytesScanned === undefined ? {} : { bytes_scanned: stats.bytesScanned }),
      };
      return rows;
    } finally {
      const elapsed = performance.now() - started;
      this.elapsedMs += elapsed;
      requestLogger().info('query', {
        engine: this.target.dialect.name,
        query_ms: Math.round(elapsed),
        ...(outcome ?? { failed: true }),
      });
    }
  }

  /** The domain's first event as a Date (UTC), or null when it has none; read within the domain's days. */
  async firstEventAt(domain: string, isDev: boolean): Promise<Date | null> {
    const [row] = await this.rows(printFirstEvent(domain, isDev, await readDomainDays(domain), this.target));
    const first = row?.first_ts;
    return typeof first === 'string' ? new Date(`${first.replace(' ', 'T')}Z`) : null;
  }

  get queryMs(): number {
    return Math.round(this.elapsedMs);
  }

  get bytesScanned(): number | undefined {
    return this.scanned;
  }
}
