import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamoItemBytes } from '../../shared/aws/service-limits.js';
import { tableNames } from '../../shared/config.js';
import { forgetImportCount, readUsage, recordImportedEventsOnce, usageKey } from '../../shared/limits/limiter.js';
import { documentClient } from '../../shared/store/dynamo-client.js';
import { excludedFiles, hideFiles, showFiles } from '../../shared/store/file-states-repo.js';
import { cloudParts } from '../support/cloud-parts.js';

// The store's DynamoDB writes against DynamoDB's own limits (enforced on every call by test/support/aws-rules): the
// state of an import of many days fits its expressions, and a month of imports keeps the usage item small.

cloudParts();

const days = (n: number) =>
  Array.from({ length: n }, (_, i) => new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString().slice(0, 10));
const itemBytes = async (pk: string) => {
  const { Item } = await documentClient().send(
    new GetItemCommand({ TableName: tableNames().counters, Key: { pk: { S: pk } }, ConsistentRead: true }),
  );
  return Item ? dynamoItemBytes(Item) : 0;
};

describe('DynamoDB limits of the store writers', () => {
  it('hides and shows the files of an import of 400 day-partitions: every expression within 4 KB', async () => {
    const name = `${'a'.repeat(32)}.parquet`;
    const files = days(400).map((d) => `dt=${d}/${name}`);
    await hideFiles('many-days.test', files);
    expect(await excludedFiles('many-days.test')).toEqual([...files].sort());
    await showFiles('many-days.test', files);
    expect(await excludedFiles('many-days.test')).toEqual([]);
  });

  it('a thousand imports keep the usage item under 4 KB, each counted once', async () => {
    const now = new Date(Date.UTC(2026, 5, 1));
    // 1,000 imports, two counted (and retried) at a time as in-flight imports would be; each forgotten once recorded.
    for (let i = 0; i < 1000; i += 2) {
      const ids = [i, i + 1].map((n) => n.toString(16).padStart(64, '0'));
      for (const id of ids) await recordImportedEventsOnce('month.test', 3, id, now);
      for (const id of ids) await recordImportedEventsOnce('month.test', 3, id, now);
      for (const id of ids) await forgetImportCount('month.test', id, now);
    }
    expect(await readUsage('month.test', now)).toBe(3 * 1000);
    expect(await itemBytes(usageKey('month.test', now))).toBeLessThan(4096);
  }, 300_000);
});
