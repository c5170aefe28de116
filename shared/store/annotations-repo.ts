import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../config.js';
import { documentClient } from './dynamo-client.js';
import { annotationsKey } from './table-schemas.js';

export interface Annotation {
  id: string;
  date: string;
  title: string;
  created_by: string;
  created_at: string;
  updated_at: string;
}

interface AnnotationItem extends Annotation {
  domain: string;
  /** `date#created_at#id`: the by_date index orders by date, then creation time. */
  date_key: string;
}

export async function putAnnotation(domain: string, annotation: Annotation): Promise<void> {
  const item: AnnotationItem = {
    ...annotation,
    domain,
    date_key: `${annotation.date}#${annotation.created_at}#${annotation.id}`,
  };
  await documentClient().send(
    new PutCommand({
      TableName: tableNames().annotations,
      Item: item,
      ConditionExpression: 'attribute_not_exists(id)',
    }),
  );
}

/** Annotations of a domain by date ascending (then creation time), within inclusive optional bounds. */
export async function listAnnotations(domain: string, startDate?: string, endDate?: string): Promise<Annotation[]> {
  const values: Record<string, string> = { ':domain': domain };
  let range = '';
  if (startDate && endDate) {
    range = ' AND date_key BETWEEN :lo AND :hi';
    Object.assign(values, { ':lo': `${startDate}#`, ':hi': `${endDate}#~` });
  } else if (startDate) {
    range = ' AND date_key >= :lo';
    values[':lo'] = `${startDate}#`;
  } else if (endDate) {
    range = ' AND date_key <= :hi';
    values[':hi'] = `${endDate}#~`;
  }
  const input: QueryCommandInput = {
    TableName: tableNames().annotations,
    IndexName: annotationsKey.dateIndex,
    KeyConditionExpression: `#domain = :domain${range}`,
    ExpressionAttributeNames: { '#domain': 'domain' },
    ExpressionAttributeValues: values,
  };
  const annotations: Annotation[] = [];
  do {
    const page = await documentClient().send(new QueryCommand(input));
    for (const item of (page.Items ?? []) as AnnotationItem[]) annotations.push(toAnnotation(item));
    input.ExclusiveStartKey = page.LastEvaluatedKey;
  } while (input.ExclusiveStartKey);
  return annotations;
}

/** Deletes one annotation of the domain; false when it does not exist there. */
export async function deleteAnnotation(domain: string, id: string): Promise<boolean> {
  try {
    await documentClient().send(
      new DeleteCommand({
        TableName: tableNames().annotations,
        Key: { domain, id },
        // Only an annotation: the domain's goals share the table (goals-repo.ts) and have no date_key.
        ConditionExpression: 'attribute_exists(date_key)',
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

function toAnnotation(item: AnnotationItem): Annotation {
  const { id, date, title, created_by, created_at, updated_at } = item;
  return { id, date, title, created_by, created_at, updated_at };
}
