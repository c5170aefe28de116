import * as z from 'zod';
import { httpHandler } from '../shared/http/handler.js';
import { calendarDateSchema, domainSchema } from '../shared/requests/fields.js';
import { routes } from '../shared/routes.js';
import { findAnnotations } from '../shared/services/annotations.js';

export const listAnnotationsQuery = z
  .strictObject({
    domain: domainSchema,
    start_date: calendarDateSchema.optional(),
    end_date: calendarDateSchema.optional(),
  })
  .refine((q) => !q.start_date || !q.end_date || q.start_date <= q.end_date, {
    path: ['start_date'],
    message: 'must not be after end_date',
  });

export const handler = httpHandler(
  routes.annotationsList,
  { query: listAnnotationsQuery },
  async ({ query, authorizeDomain }) => {
    const domain = await authorizeDomain(query.domain);
    return { body: await findAnnotations(domain, query.start_date, query.end_date) };
  },
);
