import { randomUUID } from 'node:crypto';
import { NotFoundError } from '../errors.js';
import { deleteAnnotation, listAnnotations, putAnnotation, type Annotation } from '../store/annotations-repo.js';

export async function createAnnotation(
  domain: string,
  input: { date: string; title: string },
  createdBy: string,
  now = new Date(),
): Promise<Annotation> {
  const timestamp = now.toISOString();
  const annotation: Annotation = {
    id: randomUUID(),
    date: input.date,
    title: input.title,
    created_by: createdBy,
    created_at: timestamp,
    updated_at: timestamp,
  };
  await putAnnotation(domain, annotation);
  return annotation;
}

export async function findAnnotations(domain: string, startDate?: string, endDate?: string) {
  return {
    data: await listAnnotations(domain, startDate, endDate),
    meta: { domain, date_range: [startDate ?? null, endDate ?? null] },
  };
}

export async function removeAnnotation(domain: string, id: string): Promise<{ success: true }> {
  if (!(await deleteAnnotation(domain, id))) throw new NotFoundError('Annotation not found');
  return { success: true };
}
