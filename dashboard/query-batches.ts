import { answer, ApiError, type Api, type QueryBody } from './api';
import type { QueryAnswer } from './lists';
import { QUERY_BATCH_MAX, QUERY_BATCH_ROWS_MAX, QUERY_DEFAULT_LIMIT } from '../shared/requests/query-batch-bounds';

// The view's queries asked in one moment (the cards a render shows, each asking in its effect) go to the API as one
// POST /v1/query/batch (an extension): on Athena their statements then run merged, listing each day of the range
// once and holding one of the account's active queries instead of a dozen. A query asked alone goes as POST
// /v1/query. A batch the API refuses refuses each of its queries with the same error, which the view's problem
// banner shows once; a batch out of time (504) is asked again query by query, each with a whole deadline (and
// counted again against the month's usage).

/** The rows a query asks for, as the API counts them against a batch's QUERY_BATCH_ROWS_MAX. */
const rowsOf = (body: QueryBody) => body.limit ?? QUERY_DEFAULT_LIMIT;

interface Asked {
  body: QueryBody;
  resolve: (answer: QueryAnswer) => void;
  reject: (error: unknown) => void;
}

/** A query function for `api` that gathers the queries asked until the current task ends into batches. */
export function batchedQueries(api: Api): (body: QueryBody) => Promise<QueryAnswer> {
  let waiting: Asked[] = [];
  const alone = ({ body, resolve, reject }: Asked) => answer(api.POST('/v1/query', { body })).then(resolve, reject);
  const send = async (asked: Asked[]) => {
    if (asked.length === 1) return alone(asked[0]!);
    try {
      const { results } = await answer(
        api.POST('/v1/query/batch', { body: { queries: asked.map(({ body }) => body) } }),
      );
      asked.forEach(({ resolve, reject }, i) =>
        results[i] ? resolve(results[i]) : reject(new Error('The batch answered fewer queries than it was asked')),
      );
    } catch (error) {
      if (error instanceof ApiError && error.status === 504) asked.forEach(alone);
      else asked.forEach(({ reject }) => reject(error));
    }
  };
  const flush = () => {
    const asked = waiting;
    waiting = [];
    // A batch names one domain: the view's queries share theirs.
    const byDomain = new Map<string | undefined, Asked[]>();
    for (const a of asked) byDomain.set(a.body.domain, [...(byDomain.get(a.body.domain) ?? []), a]);
    for (const group of byDomain.values()) {
      let batch: Asked[] = [];
      for (const a of group) {
        const rows = batch.reduce((sum, b) => sum + rowsOf(b.body), rowsOf(a.body));
        if (batch.length && (batch.length === QUERY_BATCH_MAX || rows > QUERY_BATCH_ROWS_MAX)) {
          void send(batch);
          batch = [];
        }
        batch.push(a);
      }
      if (batch.length) void send(batch);
    }
  };
  return (body) =>
    new Promise<QueryAnswer>((resolve, reject) => {
      // The effects of one render run in one task: the batch goes when it ends.
      if (waiting.length === 0) setTimeout(flush, 0);
      waiting.push({ body, resolve, reject });
    });
}
