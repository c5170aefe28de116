import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { tableNames } from '../config.js';
import type { Scope } from '../routes.js';
import { documentClient } from './dynamo-client.js';

export type CredentialType = 'project' | 'personal';

export interface Credential {
  keyId: string;
  type: CredentialType;
  domains: string[];
  scopes: Scope[];
  owner: string;
  eventLimit: number;
  createdAt: string;
  revokedAt?: string;
}

interface CredentialItem {
  key_id: string;
  secret_hash: string;
  type: CredentialType;
  domains: string[];
  scopes: Scope[];
  owner: string;
  event_limit: number;
  created_at: string;
  revoked_at?: string;
}

export async function putCredential(credential: Credential, secretHash: string): Promise<void> {
  const item: CredentialItem = {
    key_id: credential.keyId,
    secret_hash: secretHash,
    type: credential.type,
    domains: credential.domains,
    scopes: credential.scopes,
    owner: credential.owner,
    event_limit: credential.eventLimit,
    created_at: credential.createdAt,
  };
  await documentClient().send(
    new PutCommand({
      TableName: tableNames().credentials,
      Item: item,
      ConditionExpression: 'attribute_not_exists(key_id)',
    }),
  );
}

/** The credential and its stored secret hash, or null when the key id is unknown. */
export async function getCredential(keyId: string): Promise<{ credential: Credential; secretHash: string } | null> {
  const { Item } = await documentClient().send(
    new GetCommand({ TableName: tableNames().credentials, Key: { key_id: keyId }, ConsistentRead: true }),
  );
  if (!Item) return null;
  const item = Item as CredentialItem;
  return {
    secretHash: item.secret_hash,
    credential: {
      keyId: item.key_id,
      type: item.type,
      domains: item.domains,
      scopes: item.scopes,
      owner: item.owner,
      eventLimit: item.event_limit,
      createdAt: item.created_at,
      ...(item.revoked_at ? { revokedAt: item.revoked_at } : {}),
    },
  };
}

/** Marks a credential revoked; false when no such key exists. Revoking twice keeps the first time. */
export async function revokeCredential(keyId: string, now = new Date()): Promise<boolean> {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().credentials,
        Key: { key_id: keyId },
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: 'attribute_exists(key_id)',
        ExpressionAttributeValues: { ':now': now.toISOString() },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
