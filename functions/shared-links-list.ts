import * as z from 'zod';
import { httpHandler } from '../shared/http/handler.js';
import { domainSchema } from '../shared/requests/fields.js';
import { routes } from '../shared/routes.js';
import { findSharedLinks } from '../shared/services/shared-links.js';

export const listSharedLinksQuery = z.strictObject({ domain: domainSchema });

export const handler = httpHandler(
  routes.sharedLinksList,
  { query: listSharedLinksQuery },
  async ({ query, authorizeDomain }) => {
    const domain = await authorizeDomain(query.domain);
    return { body: await findSharedLinks(domain) };
  },
);
