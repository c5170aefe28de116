import * as z from 'zod';
import { httpHandler } from '../shared/http/handler.js';
import { annotationIdSchema, domainSchema } from '../shared/requests/fields.js';
import { routes } from '../shared/routes.js';
import { revokeSharedLink } from '../shared/services/shared-links.js';

export const deleteSharedLinkQuery = z.strictObject({ domain: domainSchema });
export const deleteSharedLinkPath = z.object({ id: annotationIdSchema });

export const handler = httpHandler(
  routes.sharedLinksDelete,
  { query: deleteSharedLinkQuery, path: deleteSharedLinkPath },
  async ({ query, path, authorizeDomain }) => {
    const domain = await authorizeDomain(query.domain);
    return { body: await revokeSharedLink(domain, path.id) };
  },
);
