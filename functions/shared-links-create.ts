import * as z from 'zod';
import { httpHandler } from '../shared/http/handler.js';
import { dataText, domainSchema } from '../shared/requests/fields.js';
import { routes } from '../shared/routes.js';
import { createSharedLink } from '../shared/services/shared-links.js';

export const createSharedLinkBody = z
  .strictObject({
    domain: domainSchema,
    name: dataText(z.string().trim().min(1, 'must not be empty').max(120, 'must be at most 120 characters')),
  })
  .meta({
    id: 'SharedLinkCreateRequest',
    description: 'A read-only link: a new key that may only read the domain, named for its owner to find it.',
    example: { domain: 'demo.example.com', name: 'Board meeting' },
  });

export const handler = httpHandler(
  routes.sharedLinksCreate,
  { body: createSharedLinkBody },
  async ({ body, credential, authorizeDomain }) => {
    const domain = await authorizeDomain(body.domain);
    return { status: 201, body: await createSharedLink(domain, body, credential) };
  },
);
