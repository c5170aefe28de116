import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../config.js';
import { documentClient } from './dynamo-client.js';

// Counters are single items updated with ADD in one conditional UpdateItem, so concurrent Lambdas can never
// admit more than the limit: DynamoDB serialises writes to an item and checks the condition on each.

export type CounterResult = { admitted: true; count: number } | { admitted: false };

/** Adds `amount` unless the counter already holds `limit` or more. */
export async function addBelowLimit(
  pk: string,
  amount: number,
  limit: number,
  expiresAt: number,
): Promise<CounterResult> {
  try {
    const { Attributes } = await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().counters,
        Key: { pk },
        UpdateExpression: 'ADD #n :amount SET expires_at = if_not_exists(expires_at, :exp)',
        ConditionExpression: 'attribute_not_exists(#n) OR #n < :limit',
        ExpressionAttributeNames: { '#n': 'n' },
        ExpressionAttributeValues: { ':amount': amount, ':limit': limit, ':exp': expiresAt },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return { admitted: true, count: Number(Attributes?.n ?? amount) };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return { admitted: false };
    throw error;
  }
}

/** Adds `amount` with no limit (imported events always count). */
export async function add(pk: string, amount: number, expiresAt: number): Promise<number> {
  const { Attributes } = await documentClient().send(
    new UpdateCommand({
      TableName: tableNames().counters,
      Key: { pk },
      UpdateExpression: 'ADD #n :amount SET expires_at = if_not_exists(expires_at, :exp)',
      ExpressionAttributeNames: { '#n': 'n' },
      ExpressionAttributeValues: { ':amount': amount, ':exp': expiresAt },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(Attributes?.n ?? amount);
}

export async function read(pk: string): Promise<number> {
  const { Item } = await documentClient().send(
    new GetCommand({ TableName: tableNames().counters, Key: { pk }, ConsistentRead: true }),
  );
  return Number(Item?.n ?? 0);
}

/**
 * Adds `amount` unless `token` was applied before: the tokens applied are kept in the item (a string set), and the
 * update is conditional on its absence, so a retried call adds nothing. Returns whether this call added. A token
 * is needed only until the caller has recorded elsewhere that its work is done (forgetToken): the set holds the
 * tokens of work in flight, so the item stays small however many calls a month brings (DynamoDB bills every
 * write by the whole item's size, and refuses items over 400 KB).
 */
export async function addOnce(pk: string, amount: number, token: string, expiresAt: number): Promise<boolean> {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().counters,
        Key: { pk },
        UpdateExpression: 'ADD #n :amount, #applied :tokens SET expires_at = if_not_exists(expires_at, :exp)',
        ConditionExpression: 'attribute_not_exists(#applied) OR NOT contains(#applied, :token)',
        ExpressionAttributeNames: { '#n': 'n', '#applied': 'applied' },
        ExpressionAttributeValues: {
          ':amount': amount,
          ':tokens': new Set([token]),
          ':token': token,
          ':exp': expiresAt,
        },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/** Forgets a token of addOnce once its caller's own record makes a retry impossible (idempotent). */
export async function forgetToken(pk: string, token: string): Promise<void> {
  await documentClient()
    .send(
      new UpdateCommand({
        TableName: tableNames().counters,
        Key: { pk },
        UpdateExpression: 'DELETE #applied :tokens',
        ConditionExpression: 'attribute_exists(#applied)',
        ExpressionAttributeNames: { '#applied': 'applied' },
        ExpressionAttributeValues: { ':tokens': new Set([token]) },
      }),
    )
    .catch((error: unknown) => {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    });
}
