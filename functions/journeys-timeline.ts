import { analyticsEngine } from '../shared/engines/registry.js';
import { httpHandler } from '../shared/http/handler.js';
import { timelineRequestSchema } from '../shared/requests/journeys.js';
import { routes } from '../shared/routes.js';
import { visitorTimeline } from '../shared/services/journeys.js';

export const handler = httpHandler(
  routes.journeysTimeline,
  { body: timelineRequestSchema, engine: analyticsEngine },
  async ({ body, authorizeDomain }) => {
    const domain = await authorizeDomain(body.domain);
    return { body: await visitorTimeline(body, domain) };
  },
);
