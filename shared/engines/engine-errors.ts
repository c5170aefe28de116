// What an engine raises when a query fails for a reason the caller can act on. Engines know nothing of HTTP: the
// HTTP layer (shared/http/engine-errors.ts) turns these into responses. Anything else an engine throws is a bug
// or an outage, logged and answered as a generic 500.

/** The query ran past its deadline; the engine has stopped it. */
export class EngineTimeoutError extends Error {
  constructor() {
    super('query timed out');
  }
}

/** The engine is at capacity or throttling its callers; the same query may succeed if retried later. */
export class EngineBusyError extends Error {
  constructor(readonly retryAfterSeconds = 1) {
    super('query engine busy');
  }
}

/**
 * The query needed more than the engine gives one query (Athena: "Query exhausted resources at this scale factor"):
 * not the request's fault, and the same query may pass when the engine is less loaded or over a narrower range.
 */
export class EngineResourcesError extends Error {
  constructor() {
    super('query exhausted the engine resources');
  }
}

/**
 * The statement has more stages than the engine plans for one query (Trino's query.max-stage-count, 150 by
 * default). Statements merged from several (shared/query/sql/statement-batch.ts) are run again apart; one query
 * alone that reaches it (many visitor filters) is the request's: a 400.
 */
export class EngineStatementTooComplexError extends Error {
  constructor() {
    super('statement over the engine stage limit');
  }
}

/** The query would read more than the engine is allowed to scan for one query. */
export class EngineScanLimitError extends Error {
  constructor() {
    super('query scan limit reached');
  }
}

/** A bound value the engine cannot represent (text with NUL or an unpaired surrogate): the request's fault. */
export class EngineValueError extends Error {}
