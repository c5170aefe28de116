import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../../shared/config.js';
import { documentClient } from '../../shared/store/dynamo-client.js';

/**
 * Removes the layout recorded for `domain` (shared/store/file-states-repo.ts), as in a store written before layouts
 * were recorded: readers then plan the domain as `bucketBeforeUpgrade`.
 */
export async function forgetLayout(domain: string): Promise<void> {
  await documentClient().send(
    new UpdateCommand({
      TableName: tableNames().counters,
      Key: { pk: `files#${domain}` },
      UpdateExpression: 'REMOVE #layout',
      ExpressionAttributeNames: { '#layout': 'layout' },
    }),
  );
}
