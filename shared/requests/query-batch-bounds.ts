// The bounds of POST /v1/query/batch, in a module of their own without schemas: the dashboard, which splits its
// batches by them, imports these and not the request schemas (which would bring their zod code into its bundle).

/** The most queries one batch takes: a dashboard's first load asks 13. */
export const QUERY_BATCH_MAX = 20;
/**
 * The most rows a batch's queries may ask for together (their `limit`s, QUERY_DEFAULT_LIMIT where none is given):
 * one query's largest page, so a batch's answer is no larger than one query's can be (Lambda answers at most 6 MB).
 */
export const QUERY_BATCH_ROWS_MAX = 1000;
/** POST /v1/query's `limit` where a request names none. */
export const QUERY_DEFAULT_LIMIT = 100;
