import { eventsQuery, windowOf } from '../shared/requests/events.js';
import { analyticsEngine } from '../shared/engines/registry.js';
import { httpHandler } from '../shared/http/handler.js';
import { routes } from '../shared/routes.js';
import { listCustomEvents } from '../shared/services/custom-events.js';

export const handler = httpHandler(
  routes.eventsList,
  { query: eventsQuery, engine: analyticsEngine },
  async ({ query, authorizeDomain }) => {
    const domain = await authorizeDomain(query.domain);
    return { body: await listCustomEvents(domain, windowOf(query)) };
  },
);
