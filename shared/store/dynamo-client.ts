import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, type UpdateCommand, type UpdateCommandOutput } from '@aws-sdk/lib-dynamodb';

// One document client per process, created on first use. The SDK reads AWS_ENDPOINT_URL itself, which is how
// the Lambda runtime and LocalStack point it elsewhere; a local process names its DynamoDB (the data folder's,
// with that folder's own credentials) with useLocalDynamo, leaving every other AWS client of the process as it was.
let client: DynamoDBDocumentClient | undefined;
let local: { endpoint: string; credentials: { accessKeyId: string; secretAccessKey: string } } | undefined;

export function documentClient(): DynamoDBDocumentClient {
  client ??= DynamoDBDocumentClient.from(
    new DynamoDBClient({
      maxAttempts: 3,
      ...(local ? { ...local, region: process.env.AWS_REGION ?? 'us-east-1' } : {}),
    }),
    {
      marshallOptions: { removeUndefinedValues: true },
    },
  );
  return client;
}

/** Sends this process's DynamoDB calls to a local endpoint with its credentials (local/server/local-dynamo.ts). */
export function useLocalDynamo(endpoint: string, credentials: { accessKeyId: string; secretAccessKey: string }): void {
  local = { endpoint, credentials };
  resetDocumentClient();
}

/** For processes that change endpoint after start (tests starting their own dynalite). */
export function resetDocumentClient(): void {
  client?.destroy();
  client = undefined;
}

/** Sends a conditional update: true when it was made, false when its condition did not hold. */
export async function updateIf(command: UpdateCommand): Promise<boolean> {
  return (await conditionalUpdate(command)) !== null;
}

/**
 * Sends a conditional update: its output (the item's attributes as its ReturnValues asks), or null when its
 * condition did not hold.
 */
export async function conditionalUpdate(command: UpdateCommand): Promise<UpdateCommandOutput | null> {
  try {
    return await documentClient().send(command);
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return null;
    throw error;
  }
}
