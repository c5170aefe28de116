import { createHash } from 'node:crypto';
import { ConflictError, NotFoundError } from '../errors.js';
import { deleteGoal, GOAL_ID_PREFIX, listGoals, putGoal, type Goal } from '../store/goals-repo.js';

/** The goals a domain may hold: each is one more query for the dashboard's goals card. */
export const MAX_GOALS = 100;

/** A goal's id: the same event or path is the same goal, so adding it twice is a 409, never a second goal. */
export function goalId(goal: { kind: Goal['kind']; value: string }): string {
  return `${GOAL_ID_PREFIX}${createHash('sha256').update(`${goal.kind}\n${goal.value}`).digest('hex').slice(0, 32)}`;
}

export async function createGoal(
  domain: string,
  input: { event_name?: string; page_path?: string },
  createdBy: string,
  now = new Date(),
): Promise<Goal> {
  const kind = input.event_name !== undefined ? 'event' : 'page';
  const value = (input.event_name ?? input.page_path)!;
  // Checked before each add (two adds at once may pass it together): a bound on work, not a quota.
  if ((await listGoals(domain)).length >= MAX_GOALS) {
    throw new ConflictError(`The domain already has ${MAX_GOALS} goals; delete one first`);
  }
  const goal: Goal = {
    id: goalId({ kind, value }),
    kind,
    ...(kind === 'event' ? { event_name: value } : { page_path: value }),
    created_by: createdBy,
    created_at: now.toISOString(),
  };
  if (!(await putGoal(domain, goal))) throw new ConflictError('The domain already has this goal');
  return goal;
}

export async function findGoals(domain: string) {
  return { data: await listGoals(domain), meta: { domain } };
}

export async function removeGoal(domain: string, id: string): Promise<{ success: true }> {
  if (!(await deleteGoal(domain, id))) throw new NotFoundError('Goal not found');
  return { success: true };
}
