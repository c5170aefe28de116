import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import type { TableNames } from '../config.js';

// Key schemas of the three tables. The local runtime creates tables from these; the CDK stack declares
// the same keys (test/infra checks that they agree).

export const credentialsKey = { partitionKey: 'key_id' } as const;
export const annotationsKey = {
  partitionKey: 'domain',
  sortKey: 'id',
  dateIndex: 'by_date',
  dateSortKey: 'date_key',
} as const;
export const countersKey = { partitionKey: 'pk', ttlAttribute: 'expires_at' } as const;

export function tableDefinitions(names: TableNames): CreateTableCommandInput[] {
  return [
    {
      TableName: names.credentials,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: credentialsKey.partitionKey, AttributeType: 'S' }],
      KeySchema: [{ AttributeName: credentialsKey.partitionKey, KeyType: 'HASH' }],
    },
    {
      TableName: names.annotations,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: annotationsKey.partitionKey, AttributeType: 'S' },
        { AttributeName: annotationsKey.sortKey, AttributeType: 'S' },
        { AttributeName: annotationsKey.dateSortKey, AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: annotationsKey.partitionKey, KeyType: 'HASH' },
        { AttributeName: annotationsKey.sortKey, KeyType: 'RANGE' },
      ],
      LocalSecondaryIndexes: [
        {
          IndexName: annotationsKey.dateIndex,
          KeySchema: [
            { AttributeName: annotationsKey.partitionKey, KeyType: 'HASH' },
            { AttributeName: annotationsKey.dateSortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    },
    {
      TableName: names.counters,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: countersKey.partitionKey, AttributeType: 'S' }],
      KeySchema: [{ AttributeName: countersKey.partitionKey, KeyType: 'HASH' }],
    },
  ];
}
