import * as z from 'zod';
import { httpHandler } from '../shared/http/handler.js';
import { domainSchema } from '../shared/requests/fields.js';
import { routes } from '../shared/routes.js';
import { findGoals } from '../shared/services/goals.js';

export const listGoalsQuery = z.strictObject({ domain: domainSchema });

export const handler = httpHandler(routes.goalsList, { query: listGoalsQuery }, async ({ query, authorizeDomain }) => {
  const domain = await authorizeDomain(query.domain);
  return { body: await findGoals(domain) };
});
