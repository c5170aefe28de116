import { eventNamePath, eventsQuery, windowOf } from '../shared/requests/events.js';
import { analyticsEngine } from '../shared/engines/registry.js';
import { httpHandler } from '../shared/http/handler.js';
import { routes } from '../shared/routes.js';
import { listEventPropertyKeys } from '../shared/services/custom-events.js';

export const handler = httpHandler(
  routes.eventProperties,
  { query: eventsQuery, path: eventNamePath, engine: analyticsEngine },
  async ({ query, path, authorizeDomain }) => {
    const domain = await authorizeDomain(query.domain);
    return { body: await listEventPropertyKeys(domain, path.name, windowOf(query)) };
  },
);
