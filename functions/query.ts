import { analyticsEngine } from '../shared/engines/registry.js';
import { httpHandler } from '../shared/http/handler.js';
import { queryRequestSchema } from '../shared/requests/query.js';
import { routes } from '../shared/routes.js';
import { runAnalyticsQuery } from '../shared/services/query.js';

export const handler = httpHandler(
  routes.query,
  { body: queryRequestSchema, engine: analyticsEngine },
  async ({ body, authorizeDomain }) => {
    const domain = await authorizeDomain(body.domain);
    return { body: await runAnalyticsQuery(body, domain) };
  },
);
