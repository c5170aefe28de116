import type { AttributeValue } from '@aws-sdk/client-dynamodb';

// AWS's documented request limits that this code builds requests against (docs/DEPLOY.md, "AWS limits the code
// keeps"). The local stand-ins (dynalite, moto, the Athena emulator) enforce few of them, so the tests hold every
// SDK call to them (test/support/aws-rules/request-limits.ts) and production code keeps within them wherever a
// request is built from data of unbounded size (file names, statements, objects).

/** DynamoDB: "The maximum length of any expression string is 4 KB" (each of Update, Condition, Projection, ...). */
export const DYNAMODB_EXPRESSION_MAX_BYTES = 4096;
/** DynamoDB: operators, functions and operands in one expression (the documented 300; counted as we build). */
export const DYNAMODB_EXPRESSION_MAX_OPERATORS = 300;
/** DynamoDB: one item, attribute names and values together. */
export const DYNAMODB_ITEM_MAX_BYTES = 400 * 1024;
export const DYNAMODB_TRANSACT_MAX_ITEMS = 100;
export const DYNAMODB_BATCH_WRITE_MAX_ITEMS = 25;
export const DYNAMODB_BATCH_GET_MAX_ITEMS = 100;
/** Athena: StartQueryExecution's QueryString. */
export const ATHENA_QUERY_MAX_BYTES = 262_144;
/** Athena: ExecutionParameters, each value's length. */
export const ATHENA_EXECUTION_PARAMETER_MAX_CHARS = 1024;
/** S3: the largest object one CopyObject can copy; larger ones need a multipart copy. */
export const S3_COPY_MAX_BYTES = 5 * 1024 ** 3;
/** S3: an object key, in UTF-8. */
export const S3_KEY_MAX_BYTES = 1024;
/** SQS: one message (and one batch), 1 MiB since 2025; S3's notifications stay far below it. */
export const SQS_MESSAGE_MAX_BYTES = 1024 * 1024;

/** Kinesis Data Firehose: PutRecordBatch takes at most 500 records and 4 MiB; one record is at most 1,000 KiB. */
export const FIREHOSE_BATCH_MAX_RECORDS = 500;
export const FIREHOSE_BATCH_MAX_BYTES = 4 * 1024 * 1024;
export const FIREHOSE_RECORD_MAX_BYTES = 1000 * 1024;

export const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * Groups `count` clauses of one expression kind into as few requests as DynamoDB accepts: each group's expression,
 * `prefix` followed by its clauses joined with ", " and then `suffix` (another clause every group carries, with
 * `suffixOperators` operators), stays within the 4 KB expression limit and the operator count. `clause(i, j)` spells
 * clause `i` as the `j`-th of its group (placeholders are numbered per group).
 */
export function packExpressionClauses(
  count: number,
  prefix: string,
  clause: (i: number, j: number) => string,
  operatorsPerClause = 1,
  suffix = '',
  suffixOperators = 0,
): { from: number; to: number; expression: string }[] {
  const groups: { from: number; to: number; expression: string }[] = [];
  let from = 0;
  while (from < count) {
    let expression = prefix;
    let to = from;
    while (to < count) {
      const next = `${to === from ? '' : ', '}${clause(to, to - from)}`;
      const operators = (to - from + 1) * operatorsPerClause + suffixOperators;
      if (
        utf8Bytes(expression + next + suffix) > DYNAMODB_EXPRESSION_MAX_BYTES ||
        operators > DYNAMODB_EXPRESSION_MAX_OPERATORS
      )
        break;
      expression += next;
      to += 1;
    }
    if (to === from)
      throw new Error(`One clause alone exceeds DynamoDB's ${DYNAMODB_EXPRESSION_MAX_BYTES}-byte expression limit`);
    groups.push({ from, to, expression: expression + suffix });
    from = to;
  }
  return groups;
}

/**
 * An item's size as DynamoDB counts it against the 400 KB limit: each attribute's name and value in UTF-8 bytes,
 * numbers by their significant digits, 3 bytes for every list or map plus 1 per element, 1 for a boolean or null.
 */
export function dynamoItemBytes(item: Record<string, AttributeValue>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += utf8Bytes(name) + valueBytes(value);
  return bytes;
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return utf8Bytes(value.S);
  if (value.N !== undefined) return numberBytes(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + utf8Bytes(s), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + numberBytes(n), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + b.byteLength, 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + valueBytes(v) + 1, 0);
  if (value.M !== undefined)
    return 3 + Object.entries(value.M).reduce((sum, [k, v]) => sum + utf8Bytes(k) + valueBytes(v) + 1, 0);
  return 0;
}

/** "Approximately (number of UTF-8-encoded bytes of attribute name) + (1 byte per two significant digits) + (1 byte)". */
function numberBytes(text: string): number {
  const digits = text.replace(/^[-+]/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}
