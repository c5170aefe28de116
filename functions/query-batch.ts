import { analyticsEngine } from '../shared/engines/registry.js';
import { httpHandler } from '../shared/http/handler.js';
import { queryBatchRequestSchema } from '../shared/requests/query.js';
import { routes } from '../shared/routes.js';
import { runAnalyticsQueryBatch } from '../shared/services/query.js';

export const handler = httpHandler(
  routes.queryBatch,
  { body: queryBatchRequestSchema, engine: analyticsEngine },
  async ({ body, authorizeDomain }) => {
    const domain = await authorizeDomain(body.queries[0]!.domain, body.queries.length);
    return { body: await runAnalyticsQueryBatch(body.queries, domain) };
  },
);
