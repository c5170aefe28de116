import * as z from 'zod';
import { httpHandler } from '../shared/http/handler.js';
import { dataText, domainSchema, MAX_PATH_SEGMENT_LENGTH } from '../shared/requests/fields.js';
import { MAX_FILTER_VALUE_LENGTH } from '../shared/requests/filters.js';
import { routes } from '../shared/routes.js';
import { createGoal } from '../shared/services/goals.js';

const ONE_OF = 'give either event_name (a custom event) or page_path (a page, e.g. "/signup" or "/blog/*")';

export const createGoalBody = z
  .strictObject({
    domain: domainSchema,
    event_name: dataText(z.string().min(1, 'must not be empty').max(MAX_PATH_SEGMENT_LENGTH)).optional(),
    page_path: dataText(
      z
        .string()
        .max(MAX_FILTER_VALUE_LENGTH)
        .regex(/^\//, 'must start with /')
        .refine((p) => !p.slice(0, -1).includes('*'), 'may hold * only at its end (every path it begins)')
        // A filter's `is` reads a comma as "or" (docs/API.md, "Filters"): such a goal could not be counted.
        .refine((p) => !p.includes(','), 'must not contain a comma'),
    ).optional(),
  })
  .refine((b) => (b.event_name === undefined) !== (b.page_path === undefined), {
    message: ONE_OF,
    path: ['event_name'],
  })
  .meta({
    id: 'GoalCreateRequest',
    description: `A goal: ${ONE_OF}.`,
    example: { domain: 'demo.example.com', event_name: 'signup' },
  });

export const handler = httpHandler(
  routes.goalsCreate,
  { body: createGoalBody },
  async ({ body, credential, authorizeDomain }) => {
    const domain = await authorizeDomain(body.domain);
    return { status: 201, body: await createGoal(domain, body, credential.owner) };
  },
);
