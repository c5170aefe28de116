import type { QueryEngine, SqlRow } from '../engines/engine.js';
import { timestamp, type SqlParam, type SqlQuery } from '../query/sql/sql.js';
import { analyticsEngine } from '../engines/registry.js';
import { requestLogger } from '../log.js';
import { isAnswerCacheOn } from '../config.js';
import { printFirstEvent } from '../query/scope/first-event.js';
import { readDomainDays } from '../store/domain-days-repo.js';
import { hiddenFiles, READ_MAX_MS, type HiddenFiles } from '../store/file-states-repo.js';
import { answerKey, readAnswer, writeAnswer } from '../store/answer-cache-repo.js';
import { withExcludedFiles, withStoreLayout } from '../query/sql/catalog.js';
import type { SqlTarget } from '../query/sql/target.js';
import { printStatementBatch, type BatchedStatement } from '../query/sql/statement-batch.js';
import {
  EngineBusyError,
  EngineResourcesError,
  EngineScanLimitError,
  EngineStatementTooComplexError,
} from '../engines/engine-errors.js';

// Runs printed queries on the installed engine and keeps the figures `meta` reports: the time spent in the
// engine (measured here, around the engine calls) and, on Athena, the bytes scanned. Where the domain's data has a
// version, a statement's rows are kept in the answer cache (shared/store/answer-cache-repo.ts) and a repeat of the
// same statement over the same version starts nothing on the engine.

/**
 * The most statements merged into one. Trino plans at most 150 stages to a query (query.max-stage-count; Athena
 * states no figure of its own). The dashboard mix's statements plan 4 to 7 stages each on Trino 476 (EXPLAIN (TYPE
 * DISTRIBUTED) over the 10M bench set), and each merged one adds its numbering: twelve stay well below the limit;
 * a statement that does not is run again apart (rowsOfEach).
 */
export const MERGED_STATEMENTS_MAX = 12;
/** What an engine answers a merged statement that one statement per query would not meet. */
const tooLargeMerged = [EngineStatementTooComplexError, EngineResourcesError, EngineScanLimitError];
/**
 * Domains whose merged statements passed the scan cutoff, and until when (ms) this process runs their queries
 * apart: a site past it pays the refused scan once per function instance and hour, not once per load. (A refusal
 * for memory may pass on the next load, and one for stages says nothing of the data: neither pauses.)
 */
const mergingPaused = new Map<string, number>();
const MERGING_PAUSE_MS = 60 * 60 * 1000;

/** How many times a slow read of the file states is tried before the request is answered 503 (READ_MAX_MS). */
const STATE_READS = 4;
const READ_TIME_IN_KEYS = timestamp(new Date(0));

/** The domain's hidden files from a read quick enough to date them by (file-states-repo.ts, READ_MAX_MS). */
async function promptHiddenFiles(domain: string): Promise<HiddenFiles> {
  for (let i = 0; i < STATE_READS; i++) {
    const hidden = await hiddenFiles(domain);
    if (hidden.readMs <= READ_MAX_MS) return hidden;
  }
  throw new EngineBusyError();
}

export class EngineRunner {
  private elapsedMs = 0;
  private scanned: number | undefined;

  private constructor(
    private readonly engine: QueryEngine,
    /** The domain whose data this runner's queries read. */
    private readonly domain: string,
    /** What this runner's queries are printed for: the engine's target, less the files upkeep is replacing. */
    readonly target: SqlTarget,
    /** The version of the data this runner's queries read; undefined: nothing is cached. */
    private readonly dataVersion: string | undefined,
    /**
     * The parameter of the time the states were read (withExcludedFiles), left out of answer keys: an answer is the
     * data version's whatever the moment it was read at.
     */
    private readonly readTime?: SqlParam,
  ) {}

  /**
   * A runner for queries of `domain`. On a store whose files upkeep replaces in place (S3), it first reads which
   * files the domain's queries must leave out (one DynamoDB read), so no query sees a partition's rows twice or part
   * of an import, however long its statements wait or run: the files hidden then, and every file uploaded since (by
   * S3's date of it). The same read gives the domain's data version and the layout of its files, which decides what
   * the plans may read.
   */
  static async forDomain(domain: string, engine: QueryEngine = analyticsEngine()): Promise<EngineRunner> {
    const { target } = engine;
    const cache = isAnswerCacheOn();
    const engineVersion = cache ? engine.dataVersion?.() : undefined;
    if (!target.catalog.filesReplacedInPlace) return new EngineRunner(engine, domain, target, engineVersion);
    const hidden = await promptHiddenFiles(domain);
    const versions = [`files:${hidden.version}`, ...(engineVersion === undefined ? [] : [engineVersion])];
    const version = cache ? versions.join(' ') : undefined;
    const readTime = timestamp(hidden.visibleBefore);
    const catalog = withExcludedFiles(withStoreLayout(target.catalog, hidden.layout), hidden, readTime, domain);
    return new EngineRunner(engine, domain, { ...target, catalog }, version, readTime);
  }

  /** A runner of its own on the same engine and files, for work that outlives the request: its time is not the request's. */
  fork(): EngineRunner {
    return new EngineRunner(this.engine, this.domain, this.target, this.dataVersion, this.readTime);
  }

  /** What caches of facts about the engine's store are kept per (services/store-shape.ts). */
  get cacheScope(): object {
    return this.engine;
  }

  /** Runs one query; logs one `query` line with its time, rows and (on Athena) bytes, never its values. */
  async rows(query: SqlQuery): Promise<SqlRow[]> {
    const key = this.keyOf(query);
    return (await this.cached(key)) ?? (await this.ran(alone(query), [key]))[0]!;
  }

  /**
   * Runs several queries, each answered as rows() would answer it: from the answer cache where it can be; the others
   * merged where merging pays (QueryEngine.takesStatement), at most MERGED_STATEMENTS_MAX to a statement, else one
   * by one. Where merging pays, the queries `sharing` groups are first answered by one statement of their own that
   * reads their relations once (a shared scan), merged like any other. One statement at a time: a batch holds one of
   * the engine's slots, as one request does. A merged statement the engine refuses for its size (stages, memory, the
   * workgroup's scan cutoff) runs again part by part, and a shared scan refused as its queries, each as POST
   * /v1/query would run it; refused for the scan cutoff, which grows with the data, the queries run alone at once,
   * and the domain's queries then run apart in this process for MERGING_PAUSE_MS.
   */
  async rowsOfEach(statements: readonly BatchedStatement[], sharing?: StatementSharing): Promise<SqlRow[][]> {
    const keys = statements.map(({ query }) => this.keyOf(query));
    const answers = await Promise.all(keys.map((key) => this.cached(key)));
    const missing = statements.flatMap((_, i) => (answers[i] ? [] : [i]));
    const merging = this.merges();
    const single = (i: number) => queryUnit(i, statements);
    const units = (merging && sharing ? sharing.groups(missing) : missing.map((i) => [i])).flatMap((members) => {
      if (members.length === 1) return [single(members[0]!)];
      // A shared scan the engine would not take (Athena's length limit) is its queries alone.
      const shared = { members, ...sharing!.print(members) };
      return this.engine.takesStatement!(shared.statement.query) ? [shared] : members.map(single);
    });
    for (const group of merging ? this.mergedGroups(units) : units.map((unit) => [unit])) {
      const rows = await this.ranUnits(group, statements, keys);
      group.flatMap((unit) => unit.members).forEach((i, n) => (answers[i] = rows[n]!));
    }
    return answers.map((answer) => answer!);
  }

  /**
   * Runs units as one statement, their answers in order. Refused for its size (tooLargeMerged), a merged statement
   * runs again unit by unit, and a shared scan refused alone runs as its queries, each as POST /v1/query would.
   */
  private async ranUnits(
    group: readonly Unit[],
    statements: readonly BatchedStatement[],
    keys: readonly (string | undefined)[],
  ): Promise<SqlRow[][]> {
    const members = group.flatMap((unit) => unit.members);
    try {
      return await this.ran(
        runOf(group),
        members.map((i) => keys[i]),
      );
    } catch (error) {
      if (members.length === 1 || !tooLargeMerged.some((kind) => error instanceof kind)) throw error;
      const paused = error instanceof EngineScanLimitError;
      if (paused) pauseMerging(this.domain);
      requestLogger().warn('the engine refused a merged statement; running its parts one by one', {
        queries: members.length,
        reason: (error as Error).message,
        ...(paused ? { merging_paused_minutes: MERGING_PAUSE_MS / 60_000 } : {}),
      });
      // After the scan cutoff, nothing merged again: each query alone.
      const parts: Unit[] = group.length > 1 && !paused ? [...group] : members.map((i) => queryUnit(i, statements));
      const apart: SqlRow[][] = [];
      for (const part of parts) apart.push(...(await this.ranUnits([part], statements, keys)));
      return apart;
    }
  }

  /** Whether this runner's statements are merged: the engine says when merging pays, unless paused for the domain. */
  private merges(): boolean {
    return this.engine.takesStatement !== undefined && (mergingPaused.get(this.domain) ?? 0) <= Date.now();
  }

  /** `units` in groups the engine takes as one statement each, in order (merges()). */
  private mergedGroups(units: readonly Unit[]): Unit[][] {
    const fits = (group: Unit[]) =>
      group.length <= MERGED_STATEMENTS_MAX && this.engine.takesStatement!(runOf(group).query);
    const groups: Unit[][] = [];
    for (const unit of units) {
      const last = groups.at(-1);
      if (last && fits([...last, unit])) last.push(unit);
      else groups.push([unit]);
    }
    return groups;
  }

  private keyOf(query: SqlQuery): string | undefined {
    if (this.dataVersion === undefined) return undefined;
    const params = query.params.map((p) => (p === this.readTime ? READ_TIME_IN_KEYS : p));
    return answerKey(this.target.dialect.name, this.dataVersion, { ...query, params });
  }

  /** A kept answer; logs the `query` line of a statement not started. */
  private async cached(key: string | undefined): Promise<SqlRow[] | undefined> {
    if (key === undefined) return undefined;
    const started = performance.now();
    const rows = await readAnswer(key);
    if (!rows) return undefined;
    // Nothing was scanned: on an engine that bills its statements the request's bytes say so.
    if (this.engine.billedPerStatement) this.scanned = this.scanned ?? 0;
    this.logQuery(started, { rows: rows.length, cached: true });
    return rows;
  }

  /**
   * Runs a statement, split into the rows of each query it answers, and keeps each answer under its key; one `query`
   * line with its time, rows, the queries it answered (where more than one) and (on Athena) bytes, never its values.
   */
  private async ran(run: Run, keys: readonly (string | undefined)[]): Promise<SqlRow[][]> {
    const started = performance.now();
    let outcome: Record<string, unknown> = { failed: true };
    try {
      const { rows, stats } = await this.engine.run(run.query);
      const answers = run.split(rows);
      await Promise.all(answers.map((answer, n) => (keys[n] === undefined ? undefined : writeAnswer(keys[n], answer))));
      if (stats.bytesScanned !== undefined) this.scanned = (this.scanned ?? 0) + stats.bytesScanned;
      outcome = {
        rows: rows.length,
        ...(answers.length > 1 ? { queries: answers.length } : {}),
        ...(stats.bytesScanned === undefined ? {} : { bytes_scanned: stats.bytesScanned }),
      };
      return answers;
    } finally {
      this.logQuery(started, outcome);
    }
  }

  private logQuery(started: number, outcome: Record<string, unknown>): void {
    const elapsed = performance.now() - started;
    this.elapsedMs += elapsed;
    requestLogger().info('query', { engine: this.target.dialect.name, query_ms: Math.round(elapsed), ...outcome });
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

function pauseMerging(domain: string): void {
  const now = Date.now();
  // The ended pauses go before the map grows past a few thousand domains.
  if (mergingPaused.size >= 4096) for (const [d, until] of mergingPaused) if (until <= now) mergingPaused.delete(d);
  mergingPaused.set(domain, now + MERGING_PAUSE_MS);
}

/**
 * Queries of a batch one statement can answer together (a shared scan, shared/query/analytics/shared-scan.ts): which
 * of them, by their indexes, and the statement for a group of them.
 */
export interface StatementSharing {
  /** `indexes` in groups, each answered by one statement; a group of one for a query answered alone. */
  groups(indexes: readonly number[]): number[][];
  print(members: readonly number[]): { statement: BatchedStatement; split(rows: readonly SqlRow[]): SqlRow[][] };
}

/** One statement of a batch and the queries (by index) its rows answer, split apart. */
interface Unit {
  members: readonly number[];
  statement: BatchedStatement;
  split(rows: readonly SqlRow[]): SqlRow[][];
}

/** A statement to run and how its rows split into the answers of its queries, in order. */
interface Run {
  query: SqlQuery;
  split(rows: readonly SqlRow[]): SqlRow[][];
}

/** The rows of a statement answering one query: its answer. */
const ownRows = (rows: readonly SqlRow[]): SqlRow[][] => [[...rows]];

/** The statement of query `i` alone. */
function queryUnit(i: number, statements: readonly BatchedStatement[]): Unit {
  return { members: [i], statement: statements[i]!, split: ownRows };
}

/** A statement answering one query. */
function alone(query: SqlQuery): Run {
  return { query, split: ownRows };
}

/** Units as one statement: a unit's own, or their merge (statement-batch.ts), each unit's rows split again. */
function runOf(units: readonly Unit[]): Run {
  if (units.length === 1) return { query: units[0]!.statement.query, split: (rows) => units[0]!.split(rows) };
  const batch = printStatementBatch(units.map((unit) => unit.statement));
  return { query: batch.query, split: (rows) => batch.split(rows).flatMap((own, n) => units[n]!.split(own)) };
}
