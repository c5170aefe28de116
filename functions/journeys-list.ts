import { analyticsEngine } from '../shared/engines/registry.js';
import { httpHandler } from '../shared/http/handler.js';
import { visitorListRequestSchema } from '../shared/requests/journeys.js';
import { routes } from '../shared/routes.js';
import { listVisitors } from '../shared/services/journeys.js';

export const handler = httpHandler(
  routes.journeysList,
  { body: visitorListRequestSchema, engine: analyticsEngine },
  async ({ body, authorizeDomain }) => {
    const domain = await authorizeDomain(body.domain);
    return { body: await listVisitors(body, domain) };
  },
);
