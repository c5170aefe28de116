import { analyticsEngine } from '../shared/engines/registry.js';
import { httpHandler } from '../shared/http/handler.js';
import { visitorRequestSchema } from '../shared/requests/journeys.js';
import { routes } from '../shared/routes.js';
import { visitorActivity } from '../shared/services/journeys.js';

export const handler = httpHandler(
  routes.journeysActivity,
  { body: visitorRequestSchema, engine: analyticsEngine },
  async ({ body, authorizeDomain }) => {
    const domain = await authorizeDomain(body.domain);
    return { body: await visitorActivity(body, domain) };
  },
);
