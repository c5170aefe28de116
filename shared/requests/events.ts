import * as z from 'zod';
import { domainSchema, pathSegment, presetSchema, queryBool, queryInt, rangeDateSchema } from './fields.js';

// Query-string parameters shared by the three custom-event endpoints.

const eventsWindowShape = {
  domain: domainSchema.optional(),
  period: presetSchema.optional(),
  start: rangeDateSchema.optional(),
  end: rangeDateSchema.optional(),
  limit: queryInt(1, 1000).optional(),
};

type WindowFields = { start?: string; end?: string };

function checkWindow(q: WindowFields, ctx: z.RefinementCtx): void {
  if ((q.start === undefined) !== (q.end === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [q.start === undefined ? 'start' : 'end'],
      message: 'start and end go together',
    });
  } else if (q.start && q.end && q.start > q.end) {
    ctx.addIssue({ code: 'custom', path: ['start'], message: 'must not be after end' });
  }
}

export const eventsQuery = z.strictObject(eventsWindowShape).superRefine(checkWindow);
export const propertyValuesQuery = z
  .strictObject({ ...eventsWindowShape, include_revenue: queryBool.optional() })
  .superRefine(checkWindow);

export const eventNamePath = z.object({ name: pathSegment });
export const propertyKeyPath = z.object({ name: pathSegment, key: pathSegment });

export function windowOf(q: { period?: z.infer<typeof presetSchema>; start?: string; end?: string; limit?: number }) {
  return { period: q.period ?? '30d', start: q.start, end: q.end, limit: q.limit ?? 100 } as const;
}
