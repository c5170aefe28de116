import * as z from 'zod';
import { httpHandler } from '../shared/http/handler.js';
import { annotationIdSchema, domainSchema } from '../shared/requests/fields.js';
import { routes } from '../shared/routes.js';
import { removeAnnotation } from '../shared/services/annotations.js';

export const deleteAnnotationQuery = z.strictObject({ domain: domainSchema });
export const deleteAnnotationPath = z.object({ id: annotationIdSchema });

export const handler = httpHandler(
  routes.annotationsDelete,
  { query: deleteAnnotationQuery, path: deleteAnnotationPath },
  async ({ query, path, authorizeDomain }) => {
    const domain = await authorizeDomain(query.domain);
    return { body: await removeAnnotation(domain, path.id) };
  },
);
