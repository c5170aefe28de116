import { propertyKeyPath, propertyValuesQuery, windowOf } from '../shared/requests/events.js';
import { analyticsEngine } from '../shared/engines/registry.js';
import { httpHandler } from '../shared/http/handler.js';
import { routes } from '../shared/routes.js';
import { listEventPropertyValues } from '../shared/services/custom-events.js';

export const handler = httpHandler(
  routes.eventPropertyValues,
  { query: propertyValuesQuery, path: propertyKeyPath, engine: analyticsEngine },
  async ({ query, path, authorizeDomain }) => {
    const domain = await authorizeDomain(query.domain);
    const window = { ...windowOf(query), includeRevenue: query.include_revenue ?? false };
    return { body: await listEventPropertyValues(domain, path.name, path.key, window) };
  },
);
