import { collectorPreflightHandler } from '../shared/http/collector-handler.js';
import { routes } from '../shared/routes.js';

export const handler = collectorPreflightHandler(routes.collectEventPreflight);
