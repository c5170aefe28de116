import * as z from 'zod';
import { httpHandler } from '../shared/http/handler.js';
import { annotationIdSchema, domainSchema } from '../shared/requests/fields.js';
import { routes } from '../shared/routes.js';
import { removeGoal } from '../shared/services/goals.js';

export const deleteGoalQuery = z.strictObject({ domain: domainSchema });
export const deleteGoalPath = z.object({ id: annotationIdSchema });

export const handler = httpHandler(
  routes.goalsDelete,
  { query: deleteGoalQuery, path: deleteGoalPath },
  async ({ query, path, authorizeDomain }) => {
    const domain = await authorizeDomain(query.domain);
    return { body: await removeGoal(domain, path.id) };
  },
);
