import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../config.js';
import { documentClient } from './dynamo-client.js';

// A lease: at most one holder at a time of work that must not overlap (upkeep of the S3 store), kept as one item
// in the counters table (`lease#<name>`). Taking it is one conditional write, so two takers can never both hold
// it; a holder that dies leaves a lease that ends by itself at `until` (longer than the holder may run), and
// DynamoDB's TTL removes the item a day later if no one takes it again. The item also carries the holder's
// `cursor`: where the next holder goes on.

export interface Lease {
  /** Where the previous holder stopped, if it said. */
  cursor?: string;
}

const key = (name: string) => ({ pk: `lease#${name}` });

/** Takes the lease for `ms` unless another holder has it; `owner` identifies this holder (a run's id). */
export async function takeLease(name: string, owner: string, ms: number, now = Date.now()): Promise<Lease | undefined> {
  try {
    const { Attributes } = await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().counters,
        Key: key(name),
        UpdateExpression: 'SET #owner = :owner, #until = :until, expires_at = :expires',
        ConditionExpression: 'attribute_not_exists(#until) OR #until < :now',
        ExpressionAttributeNames: { '#owner': 'owner', '#until': 'until' },
        ExpressionAttributeValues: {
          ':owner': owner,
          ':until': now + ms,
          ':now': now,
          ':expires': Math.floor((now + ms) / 1000) + 86_400,
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return { ...(typeof Attributes?.cursor === 'string' ? { cursor: Attributes.cursor } : {}) };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/** Ends the lease if `owner` still holds it, leaving `cursor` (or none: start from the beginning) for the next holder. */
export async function releaseLease(name: string, owner: string, cursor?: string): Promise<void> {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().counters,
        Key: key(name),
        UpdateExpression:
          cursor === undefined ? 'SET #until = :zero REMOVE #cursor' : 'SET #until = :zero, #cursor = :cursor',
        ConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner', '#until': 'until', '#cursor': 'cursor' },
        ExpressionAttributeValues: {
          ':owner': owner,
          ':zero': 0,
          ...(cursor === undefined ? {} : { ':cursor': cursor }),
        },
      }),
    );
  } catch (error) {
    // Another holder took it after ours ended: its cursor stands.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}
