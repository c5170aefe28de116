import { analyticsEngine } from '../shared/engines/registry.js';
import { httpHandler } from '../shared/http/handler.js';
import { visitorRequestSchema } from '../shared/requests/journeys.js';
import { routes } from '../shared/routes.js';
import { visitorStats } from '../shared/services/journeys.js';

export const handler = httpHandler(
  routes.journeysStats,
  { body: visitorRequestSchema, engine: analyticsEngine },
  async ({ body, authorizeDomain }) => {
    const domain = await authorizeDomain(body.domain);
    return { body: await visitorStats(body, domain) };
  },
);
