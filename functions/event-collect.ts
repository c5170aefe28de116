import { collectBodySchema, MAX_COLLECT_BODY_BYTES } from '../shared/collect/event-body.js';
import { collectorHandler } from '../shared/http/collector-handler.js';
import { routes } from '../shared/routes.js';
import { collectEvent } from '../shared/services/collect.js';

export const handler = collectorHandler(
  routes.collectEvent,
  { body: collectBodySchema, maxBodyBytes: MAX_COLLECT_BODY_BYTES },
  ({ body, headers, sourceIp }) =>
    collectEvent({
      body,
      userAgent: headers['user-agent'],
      connectedFrom: sourceIp,
      forwardedFor: headers['x-forwarded-for'],
    }),
);
