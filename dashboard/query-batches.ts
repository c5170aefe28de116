import { answer, ApiError, type Api, type QueryBody } from './api';
import type { QueryAnswer } from './lists';

// The view's queries asked in one moment (the cards a render shows, each asking in its effect) go to the API as one
// POST /v1/query/batch (an extension): on Athena their statements then run as one, listing each day of the range
// once and holding one of the account's active queries instead of a dozen. A query asked alone goes as POST
// /v1/query. A batch the API refuses refuses each of its queries with the same error, which the view's problem
// banner shows once; a batch out of time (504) is asked again query by query.

/** The most queries the API takes in one batch (QUERY_BATCH_MAX). */
const BATCH_MAX = 20;

interface Asked {
  body: QueryBody;
  resolve: (answer: QueryAnswer) => void;
  reject: (error: unknown) => void;
}

/** A query function for `api` that gathers the queries asked until the current task ends into batches. */
export function batchedQueries(api: Api): (body: QueryBody) => Promise<QueryAnswer> {
  let waiting: Asked[] = [];
  const send = (asked: Asked[]) => {
    if (asked.length === 1) {
      const [one] = asked;
      answer(api.POST('/v1/query', { body: one!.body })).then(one!.resolve, one!.reject);
      return;
    }
    answer(api.POST('/v1/query/batch', { body: { queries: asked.map(({ body }) => body) } })).then(
      ({ results }) => asked.forEach(({ resolve }, i) => resolve(results[i]!)),
      (error: unknown) => {
        // Out of time: the batch's queries shared one deadline, and each alone has a whole one.
        if (error instanceof ApiError && error.status === 504) asked.forEach((a) => send([a]));
        else asked.forEach(({ reject }) => reject(error));
      },
    );
  };
  const flush = () => {
    const asked = waiting;
    waiting = [];
    // A batch names one domain: the view's queries share theirs.
    const byDomain = new Map<string | undefined, Asked[]>();
    for (const a of asked) byDomain.set(a.body.domain, [...(byDomain.get(a.body.domain) ?? []), a]);
    for (const group of byDomain.values())
      for (let start = 0; start < group.length; start += BATCH_MAX) send(group.slice(start, start + BATCH_MAX));
  };
  return (body) =>
    new Promise<QueryAnswer>((resolve, reject) => {
      // The effects of one render run in one task: the batch goes when it ends.
      if (waiting.length === 0) setTimeout(flush, 0);
      waiting.push({ body, resolve, reject });
    });
}
