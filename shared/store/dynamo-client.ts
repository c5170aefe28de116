import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

// One document client per process, created on first use. The SDK reads AWS_ENDPOINT_URL itself, which is how
// the local runtime (dynalite) and LocalStack point it elsewhere.
let client: DynamoDBDocumentClient | undefined;

export function documentClient(): DynamoDBDocumentClient {
  client ??= DynamoDBDocumentClient.from(new DynamoDBClient({ maxAttempts: 3 }), {
    marshallOptions: { removeUndefinedValues: true },
  });
  return client;
}

/** For processes that change endpoint after start (tests starting their own dynalite). */
export function resetDocumentClient(): void {
  client?.destroy();
  client = undefined;
}
