import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../config.js';
import { documentClient } from './dynamo-client.js';

// A domain's goals live in the annotations table beside its annotations (the same key: `domain`, `id`), so they
// share its grants, backups and tests. Their ids start with `goal-`; they carry `kind` and no `date_key`, so the
// annotations' by_date index never lists them, and each side deletes only items of its own kind.

export const GOAL_ID_PREFIX = 'goal-';

export interface Goal {
  id: string;
  /** `event`: a custom event by name; `page`: a pageview of a path (a trailing `*` matches every path it begins). */
  kind: 'event' | 'page';
  event_name?: string;
  page_path?: string;
  created_by: string;
  created_at: string;
}

interface GoalItem extends Goal {
  domain: string;
}

/** Stores a goal unless one with its id (the same event or path) exists; false when it does. */
export async function putGoal(domain: string, goal: Goal): Promise<boolean> {
  const item: GoalItem = { ...goal, domain };
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableNames().annotations,
        Item: item,
        ConditionExpression: 'attribute_not_exists(id)',
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/** A domain's goals, oldest first (then by id). */
export async function listGoals(domain: string): Promise<Goal[]> {
  const input: QueryCommandInput = {
    TableName: tableNames().annotations,
    KeyConditionExpression: '#domain = :domain AND begins_with(id, :prefix)',
    ExpressionAttributeNames: { '#domain': 'domain' },
    ExpressionAttributeValues: { ':domain': domain, ':prefix': GOAL_ID_PREFIX },
  };
  const goals: Goal[] = [];
  do {
    const page = await documentClient().send(new QueryCommand(input));
    for (const item of (page.Items ?? []) as GoalItem[]) goals.push(toGoal(item));
    input.ExclusiveStartKey = page.LastEvaluatedKey;
  } while (input.ExclusiveStartKey);
  return goals.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
}

/** Deletes one goal of the domain; false when there is none with that id (an annotation's or a link's is none). */
export async function deleteGoal(domain: string, id: string): Promise<boolean> {
  try {
    await documentClient().send(
      new DeleteCommand({
        TableName: tableNames().annotations,
        Key: { domain, id },
        ConditionExpression: 'kind IN (:event, :page)',
        ExpressionAttributeValues: { ':event': 'event', ':page': 'page' },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

function toGoal(item: GoalItem): Goal {
  const { id, kind, event_name, page_path, created_by, created_at } = item;
  return {
    id,
    kind,
    ...(event_name !== undefined ? { event_name } : {}),
    ...(page_path !== undefined ? { page_path } : {}),
    created_by,
    created_at,
  };
}
