import {
  ATHENA_EXECUTION_PARAMETER_MAX_CHARS,
  ATHENA_QUERY_MAX_BYTES,
  DYNAMODB_BATCH_GET_MAX_ITEMS,
  DYNAMODB_BATCH_WRITE_MAX_ITEMS,
  DYNAMODB_EXPRESSION_MAX_BYTES,
  DYNAMODB_ITEM_MAX_BYTES,
  DYNAMODB_TRANSACT_MAX_ITEMS,
  FIREHOSE_BATCH_MAX_BYTES,
  FIREHOSE_BATCH_MAX_RECORDS,
  FIREHOSE_RECORD_MAX_BYTES,
  S3_KEY_MAX_BYTES,
  SQS_MESSAGE_MAX_BYTES,
  dynamoItemBytes,
  utf8Bytes,
} from '../../../shared/aws/service-limits.js';
import type { Json } from './template.js';

// AWS's documented request limits (shared/aws/service-limits.ts), checked on a request before it is sent: what the
// service would refuse with a ValidationException, the tests refuse too, whatever the stand-in accepts.

const EXPRESSIONS = [
  'UpdateExpression',
  'ConditionExpression',
  'KeyConditionExpression',
  'FilterExpression',
  'ProjectionExpression',
] as const;

export function requestLimitViolations(service: string, command: string, input: Json): string[] {
  const problems: string[] = [];
  if (service === 'firehose' && command === 'PutRecordBatchCommand') {
    const records: { Data?: Uint8Array }[] = input.Records ?? [];
    const sizes = records.map((r) => r.Data?.byteLength ?? 0);
    if (records.length > FIREHOSE_BATCH_MAX_RECORDS)
      problems.push(`PutRecordBatch has ${records.length} records; the limit is ${FIREHOSE_BATCH_MAX_RECORDS}`);
    if (sizes.reduce((a, b) => a + b, 0) > FIREHOSE_BATCH_MAX_BYTES)
      problems.push(
        `PutRecordBatch carries ${sizes.reduce((a, b) => a + b, 0)} bytes; the limit is ${FIREHOSE_BATCH_MAX_BYTES}`,
      );
    const largest = Math.max(0, ...sizes);
    if (largest > FIREHOSE_RECORD_MAX_BYTES)
      problems.push(`a Firehose record of ${largest} bytes; the limit is ${FIREHOSE_RECORD_MAX_BYTES}`);
  }
  if (service === 'dynamodb') {
    const checkOne = (request: Json, where: string) => {
      for (const name of EXPRESSIONS) {
        const text = request?.[name];
        if (typeof text === 'string' && utf8Bytes(text) > DYNAMODB_EXPRESSION_MAX_BYTES) {
          problems.push(
            `${where}${name} is ${utf8Bytes(text)} bytes; DynamoDB refuses expressions over ${DYNAMODB_EXPRESSION_MAX_BYTES}`,
          );
        }
      }
      if (request?.Item && dynamoItemBytes(request.Item) > DYNAMODB_ITEM_MAX_BYTES)
        problems.push(
          `${where}Item is ${dynamoItemBytes(request.Item)} bytes; DynamoDB's item limit is ${DYNAMODB_ITEM_MAX_BYTES}`,
        );
    };
    checkOne(input, '');
    if (command === 'TransactWriteItemsCommand') {
      if ((input.TransactItems ?? []).length > DYNAMODB_TRANSACT_MAX_ITEMS)
        problems.push(
          `TransactWriteItems has ${input.TransactItems.length} items; the limit is ${DYNAMODB_TRANSACT_MAX_ITEMS}`,
        );
      for (const [i, item] of (input.TransactItems ?? []).entries())
        checkOne(Object.values(item)[0], `TransactItems[${i}].`);
    }
    if (command === 'BatchWriteItemCommand') {
      const count = Object.values(input.RequestItems ?? {}).reduce(
        (n: number, list) => n + (list as unknown[]).length,
        0,
      );
      if (count > DYNAMODB_BATCH_WRITE_MAX_ITEMS)
        problems.push(`BatchWriteItem has ${count} requests; the limit is ${DYNAMODB_BATCH_WRITE_MAX_ITEMS}`);
    }
    if (command === 'BatchGetItemCommand') {
      const count = Object.values(input.RequestItems ?? {}).reduce(
        (n: number, r) => n + ((r as Json).Keys ?? []).length,
        0,
      );
      if (count > DYNAMODB_BATCH_GET_MAX_ITEMS)
        problems.push(`BatchGetItem asks for ${count} keys; the limit is ${DYNAMODB_BATCH_GET_MAX_ITEMS}`);
    }
  }
  if (service === 'athena' && command === 'StartQueryExecutionCommand') {
    const bytes = utf8Bytes(String(input.QueryString ?? ''));
    if (bytes > ATHENA_QUERY_MAX_BYTES)
      problems.push(`QueryString is ${bytes} bytes; Athena refuses more than ${ATHENA_QUERY_MAX_BYTES}`);
    for (const [i, value] of (input.ExecutionParameters ?? []).entries()) {
      if (typeof value !== 'string' || value.length < 1 || value.length > ATHENA_EXECUTION_PARAMETER_MAX_CHARS) {
        problems.push(
          `ExecutionParameters[${i}] must be a string of 1 to ${ATHENA_EXECUTION_PARAMETER_MAX_CHARS} characters`,
        );
      }
    }
  }
  if (service === 's3') {
    if (typeof input.Key === 'string' && utf8Bytes(input.Key) > S3_KEY_MAX_BYTES)
      problems.push(`Key is ${utf8Bytes(input.Key)} bytes; S3's limit is ${S3_KEY_MAX_BYTES}`);
  }
  if (service === 'sqs' && (command === 'SendMessageCommand' || command === 'SendMessageBatchCommand')) {
    const bodies: string[] =
      command === 'SendMessageCommand' ? [input.MessageBody] : (input.Entries ?? []).map((e: Json) => e.MessageBody);
    const total = bodies.reduce((n, b) => n + utf8Bytes(String(b ?? '')), 0);
    if (total > SQS_MESSAGE_MAX_BYTES)
      problems.push(`the message bodies are ${total} bytes; SQS's limit is ${SQS_MESSAGE_MAX_BYTES}`);
  }
  return problems;
}

/** The keys of the items a successful DynamoDB write changed, to check their sizes afterwards. */
export function writtenItems(command: string, input: Json): { table: string; key: Json }[] {
  if (command === 'UpdateItemCommand') return [{ table: input.TableName, key: input.Key }];
  if (command === 'TransactWriteItemsCommand') {
    return (input.TransactItems ?? []).flatMap((item: Json) =>
      item.Update ? [{ table: item.Update.TableName, key: item.Update.Key }] : [],
    );
  }
  return [];
}
