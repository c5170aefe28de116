import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../config.js';
import { documentClient } from './dynamo-client.js';

// A domain's shared links live in the annotations table beside its annotations and goals (key `domain`, `id`), ids
// `link-<key id>`, `kind` `link`: the record of a read-only key issued for a link, so its owner can list and revoke
// it. The key itself is a credential like any other (credentials-repo.ts); only its hash is stored there.

export const LINK_ID_PREFIX = 'link-';

export interface SharedLink {
  id: string;
  key_id: string;
  name: string;
  created_by: string;
  created_at: string;
}

interface LinkItem extends SharedLink {
  domain: string;
  kind: 'link';
}

export async function putSharedLink(domain: string, link: SharedLink): Promise<void> {
  const item: LinkItem = { ...link, domain, kind: 'link' };
  await documentClient().send(
    new PutCommand({
      TableName: tableNames().annotations,
      Item: item,
      ConditionExpression: 'attribute_not_exists(id)',
    }),
  );
}

/** A domain's shared links, oldest first. */
export async function listSharedLinks(domain: string): Promise<SharedLink[]> {
  const input: QueryCommandInput = {
    TableName: tableNames().annotations,
    KeyConditionExpression: '#domain = :domain AND begins_with(id, :prefix)',
    ExpressionAttributeNames: { '#domain': 'domain' },
    ExpressionAttributeValues: { ':domain': domain, ':prefix': LINK_ID_PREFIX },
  };
  const links: SharedLink[] = [];
  do {
    const page = await documentClient().send(new QueryCommand(input));
    for (const item of (page.Items ?? []) as LinkItem[]) {
      const { id, key_id, name, created_by, created_at } = item;
      links.push({ id, key_id, name, created_by, created_at });
    }
    input.ExclusiveStartKey = page.LastEvaluatedKey;
  } while (input.ExclusiveStartKey);
  return links.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
}

/** Deletes a link's record and returns it; null when the domain has no link with that id. */
export async function deleteSharedLink(domain: string, id: string): Promise<SharedLink | null> {
  try {
    const { Attributes } = await documentClient().send(
      new DeleteCommand({
        TableName: tableNames().annotations,
        Key: { domain, id },
        ConditionExpression: 'kind = :link',
        ExpressionAttributeValues: { ':link': 'link' },
        ReturnValues: 'ALL_OLD',
      }),
    );
    const { key_id, name, created_by, created_at } = Attributes as LinkItem;
    return { id, key_id, name, created_by, created_at };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return null;
    throw error;
  }
}
