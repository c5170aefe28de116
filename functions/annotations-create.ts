import * as z from 'zod';
import { httpHandler } from '../shared/http/handler.js';
import { calendarDateSchema, dataText, domainSchema } from '../shared/requests/fields.js';
import { routes } from '../shared/routes.js';
import { createAnnotation } from '../shared/services/annotations.js';

export const createAnnotationBody = z
  .strictObject({
    domain: domainSchema,
    date: calendarDateSchema,
    title: dataText(z.string().trim().min(1, 'must not be empty').max(250, 'must be at most 250 characters')),
  })
  .meta({
    id: 'AnnotationCreateRequest',
    example: { domain: 'demo.example.com', date: '2026-11-02', title: 'Pricing page redesign' },
  });

export const handler = httpHandler(
  routes.annotationsCreate,
  { body: createAnnotationBody },
  async ({ body, credential, authorizeDomain }) => {
    const domain = await authorizeDomain(body.domain);
    return { status: 201, body: await createAnnotation(domain, body, credential.owner) };
  },
);
