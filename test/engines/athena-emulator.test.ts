import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
  type QueryExecution,
} from '@aws-sdk/client-athena';
import { placeholderClauses, substituteParameters } from '../../local/athena-emulator/execution-parameters.js';
import { startAthenaEmulator, type AthenaEmulator } from '../../local/athena-emulator/athena-emulator.js';
import { sharedTrino } from '../support/shared-trino.js';
import { AthenaEngine } from '../../shared/engines/athena-engine.js';
import { int, print, sql, str, trusted } from '../../shared/query/sql/sql.js';
import { EngineResourcesError } from '../../shared/engines/engine-errors.js';
import { apiErrorOfEngine } from '../../shared/http/engine-errors.js';
import { trinoAvailable } from '../support/trino-available.js';
import { sendingWhatAwsRefuses } from '../support/aws-rules/install.js';

// The Athena emulator's rules, each as Athena documents it, checked through the real SDK against a real Trino;
// and the rule the engine relies on: result reuse, matching on the text alone, never answers one domain with
// another's rows, because every statement names its domain in its text.

describe('where Athena takes execution parameters', () => {
  it('accepts a ? in WHERE, also inside functions, IN lists and subqueries of WHERE', () => {
    expect(
      placeholderClauses(
        "SELECT a FROM t WHERE x = ? AND lower(y) IN (?, 'q?') AND z IN (SELECT z FROM u WHERE w = ?)",
      ).map((p) => p.clause),
    ).toEqual(['WHERE', 'WHERE', 'WHERE']);
  });

  it('refuses a ? in a SELECT list, HAVING, an aggregate FILTER, a JOIN ... ON, ORDER BY and LIMIT', () => {
    for (const [statement, clause] of [
      ['SELECT coalesce(a, ?) FROM t', 'SELECT'],
      ['SELECT a FROM t GROUP BY a HAVING count(*) > ?', 'HAVING'],
      ['SELECT count(*) FILTER (WHERE a = ?) FROM t', 'FILTER'],
      ['SELECT a FROM t JOIN u ON t.k = u.k AND u.x = ?', 'ON'],
      ['SELECT a FROM t WHERE b = 1 ORDER BY a LIMIT ?', 'LIMIT'],
    ] as const) {
      expect(
        placeholderClauses(statement).map((p) => p.clause),
        statement,
      ).toEqual([clause]);
      expect(() => substituteParameters(statement, ["'x'"]), statement).toThrow(/only in WHERE/);
    }
  });

  it('ignores a ? in quotes and comments, counts the values, and limits each to 1024 characters', () => {
    expect(placeholderClauses(`SELECT '?', "?" FROM t -- ?\nWHERE /* ? */ a = ?`)).toHaveLength(1);
    expect(substituteParameters('SELECT 1 FROM t WHERE a = ? AND b = ?', ["'x'", '2'])).toBe(
      "SELECT 1 FROM t WHERE a = 'x' AND b = 2",
    );
    expect(() => substituteParameters('SELECT 1 FROM t WHERE a = ?', [])).toThrow(/1 parameter placeholders but 0/);
    expect(() => substituteParameters('SELECT 1 FROM t WHERE a = ?', [`'${'x'.repeat(1023)}'`])).toThrow(
      /1 to 1024 characters/,
    );
    expect(substituteParameters('SELECT 1 FROM t WHERE a = ?', [`'${'x'.repeat(1022)}'`])).toHaveLength(1050);
  });
});

/** What the emulator's clients sign with here. */
const LOCAL = { accessKeyId: 'local', secretAccessKey: 'local' };

describe.skipIf(!trinoAvailable('Athena emulator suite'))('the Athena emulator on Trino, through the SDK', () => {
  let emulator: AthenaEmulator;
  let client: AthenaClient;

  beforeAll(async () => {
    emulator = await startAthenaEmulator({ trino: sharedTrino(), credentials: LOCAL });
    client = new AthenaClient({ endpoint: emulator.url, region: 'us-east-1', credentials: LOCAL });
  }, 300_000);
  afterAll(async () => {
    await emulator?.close();
  });

  async function start(query: string, extra: Record<string, unknown> = {}): Promise<string> {
    const out = await client.send(
      new StartQueryExecutionCommand({ QueryString: query, WorkGroup: 'primary', ...extra }),
    );
    return out.QueryExecutionId!;
  }

  async function finished(id: string): Promise<QueryExecution> {
    for (;;) {
      const { QueryExecution: e } = await client.send(new GetQueryExecutionCommand({ QueryExecutionId: id }));
      if (!['QUEUED', 'RUNNING'].includes(e!.Status!.State!)) return e!;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('pages results by at most 1000 rows, the names first, every value as text and NULL without a value', async () => {
    const id = await start(
      "SELECT n, IF(n % 2 = 0, NULL, CAST(n AS varchar)) AS odd, n / 4.0e0 AS q, ARRAY['a', 'b'] AS xs, DATE '2026-01-02' AS d FROM UNNEST(sequence(1, 2500)) AS t(n)",
    );
    expect((await finished(id)).Status!.State).toBe('SUCCEEDED');
    const first = await client.send(new GetQueryResultsCommand({ QueryExecutionId: id, MaxResults: 1000 }));
    expect(first.ResultSet!.ResultSetMetadata!.ColumnInfo!.map((c) => [c.Name, c.Type])).toEqual([
      ['n', 'bigint'],
      ['odd', 'varchar'],
      ['q', 'double'],
      ['xs', 'array'],
      ['d', 'date'],
    ]);
    const rows = first.ResultSet!.Rows!;
    expect(rows).toHaveLength(1000);
    expect(rows[0]!.Data!.map((d) => d.VarCharValue)).toEqual(['n', 'odd', 'q', 'xs', 'd']);
    expect(rows[1]!.Data).toEqual([
      { VarCharValue: '1' },
      { VarCharValue: '1' },
      { VarCharValue: '0.25' },
      { VarCharValue: '[a, b]' },
      { VarCharValue: '2026-01-02' },
    ]);
    expect(rows[2]!.Data![1]).toEqual({});
    let count = rows.length - 1;
    let token = first.NextToken;
    while (token) {
      const next = await client.send(
        new GetQueryResultsCommand({ QueryExecutionId: id, MaxResults: 1000, NextToken: token }),
      );
      expect(next.ResultSet!.Rows!.length).toBeLessThanOrEqual(1000);
      count += next.ResultSet!.Rows!.length;
      token = next.NextToken;
    }
    expect(count).toBe(2500);
    await expect(client.send(new GetQueryResultsCommand({ QueryExecutionId: id, MaxResults: 1001 }))).rejects.toThrow(
      /MaxResults/,
    );
  });

  it('refuses what Athena refuses: a ? outside WHERE, a parameter over 1024 characters', async () => {
    await expect(start('SELECT ? AS x', { ExecutionParameters: ["'a'"] })).rejects.toMatchObject({
      name: 'InvalidRequestException',
    });
    // The tests' own AWS rules refuse this too (test/support/aws-rules): sent past them to reach the emulator.
    await expect(
      sendingWhatAwsRefuses(() => start('SELECT 1 WHERE 1 = ?', { ExecutionParameters: [`'${'a'.repeat(1100)}'`] })),
    ).rejects.toMatchObject({ name: 'InvalidRequestException' });
    const id = await start("SELECT 1 AS one WHERE 'a' = ?", { ExecutionParameters: ["'a'"] });
    expect((await finished(id)).Status!.State).toBe('SUCCEEDED');
  });

  it('reports a failed statement with its reason, and a stopped one as cancelled', async () => {
    const failed = await finished(
      await start('SELECT * FROM no_such_table', { QueryExecutionContext: { Database: 'default' } }),
    );
    expect(failed.Status).toMatchObject({ State: 'FAILED', AthenaError: { ErrorCategory: 2 } });
    expect(failed.Status!.StateChangeReason).toMatch(/no_such_table|default/);
    const slow = await start(
      'SELECT count(*) FROM UNNEST(sequence(1, 10000)) a(x) CROSS JOIN UNNEST(sequence(1, 100000)) b(y) CROSS JOIN UNNEST(sequence(1, 1000)) c(z)',
    );
    await client.send(new StopQueryExecutionCommand({ QueryExecutionId: slow }));
    expect((await finished(slow)).Status!.State).toBe('CANCELLED');
  });

  it('reports a statement that exhausts the engine`s memory as Athena does, which the API answers 503 saying what to do', async () => {
    // A hundred million distinct keys: far past what the tests' Trino gives one query (trino-server.ts).
    const hungry =
      'SELECT count(*) AS n FROM (SELECT x FROM (SELECT a * 100000 + b AS x FROM UNNEST(sequence(1, 10000)) t(a) CROSS JOIN UNNEST(sequence(1, 10000)) u(b)) GROUP BY x)';
    const failed = await finished(await start(hungry));
    expect(failed.Status).toMatchObject({ State: 'FAILED', AthenaError: { ErrorCategory: 1, ErrorType: 0 } });
    expect(failed.Status!.StateChangeReason).toMatch(/memory/i);
    const engine = new AthenaEngine(
      { workgroup: 'primary', database: 'default', table: 'events', resultReuseMinutes: 0, timeoutMs: 120_000 },
      { client },
    );
    const error = await engine.run(print(sql`${trusted(hungry)}`)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineResourcesError);
    expect(apiErrorOfEngine(error)).toMatchObject({ status: 503, code: 'service_unavailable' });
  }, 240_000);

  it('reuses a result for the same text alone, so statements differing only by a parameter value would share rows', async () => {
    const reuse = {
      ResultReuseConfiguration: { ResultReuseByAgeConfiguration: { Enabled: true, MaxAgeInMinutes: 5 } },
    };
    const text = 'SELECT x FROM (VALUES 1, 2) AS t(x) WHERE x = ?';
    const first = await start(text, { ...reuse, ExecutionParameters: ['1'] });
    await finished(first);
    const second = await start(text, { ...reuse, ExecutionParameters: ['2'] });
    const e = await finished(second);
    expect(e.Statistics!.ResultReuseInformation!.ReusedPreviousResult).toBe(true);
    const rows = (await client.send(new GetQueryResultsCommand({ QueryExecutionId: second }))).ResultSet!.Rows!;
    // The worst case Athena's documentation allows: the first statement's rows for the second's question.
    expect(rows[1]!.Data![0]!.VarCharValue).toBe('1');
  });

  it('refuses a start past the active-query quota as Athena does; the engine waits and retries, and every statement answers', async () => {
    const small = await startAthenaEmulator({ trino: sharedTrino(), credentials: LOCAL, activeQueryQuota: 2 });
    try {
      const quotaClient = new AthenaClient({
        endpoint: small.url,
        region: 'us-east-1',
        credentials: LOCAL,
        maxAttempts: 1,
      });
      const slow =
        'SELECT count(*) FROM UNNEST(sequence(1, 10000)) a(x) CROSS JOIN UNNEST(sequence(1, 100000)) b(y) CROSS JOIN UNNEST(sequence(1, 1000)) c(z)';
      const running = await Promise.all(
        [1, 2].map(
          async () =>
            (await quotaClient.send(new StartQueryExecutionCommand({ QueryString: slow, WorkGroup: 'primary' })))
              .QueryExecutionId!,
        ),
      );
      const refused = await quotaClient
        .send(new StartQueryExecutionCommand({ QueryString: 'SELECT 1', WorkGroup: 'primary' }))
        .catch((e: unknown) => e);
      expect(refused).toMatchObject({ name: 'TooManyRequestsException', Reason: 'CONCURRENT_QUERY_LIMIT_EXCEEDED' });
      await quotaClient.send(new StopQueryExecutionCommand({ QueryExecutionId: running[0] }));
      await quotaClient.send(new StopQueryExecutionCommand({ QueryExecutionId: running[1] }));
      // Eight statements at once against a quota of two: the refused starts are retried until each runs.
      const engine = new AthenaEngine(
        { workgroup: 'primary', database: 'default', table: 'events', resultReuseMinutes: 0, timeoutMs: 20_000 },
        { client: quotaClient },
      );
      const answers = await Promise.all(
        [1, 2, 3, 4, 5, 6, 7, 8].map((n) =>
          engine.run(print(sql`SELECT x FROM (VALUES 1, 2, 3, 4, 5, 6, 7, 8) AS t(x) WHERE x = ${int(n)}`)),
        ),
      );
      expect(answers.map((a) => a.rows)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((x) => [{ x }]));
    } finally {
      await small.close();
    }
  });

  it('never serves one domain another domain`s rows through the engine: its statements name their domain', async () => {
    const engine = new AthenaEngine(
      { workgroup: 'primary', database: 'default', table: 'events', resultReuseMinutes: 60, timeoutMs: 20_000 },
      { client },
    );
    const byDomain = (domain: string) =>
      print(sql`SELECT d FROM (VALUES 'a.test', 'b.test') AS t(d) WHERE d = ${str(domain)}`);
    const a = await engine.run(byDomain('a.test'));
    const b = await engine.run(byDomain('b.test'));
    const again = await engine.run(byDomain('b.test'));
    expect([a.rows, b.rows, again.rows]).toEqual([[{ d: 'a.test' }], [{ d: 'b.test' }], [{ d: 'b.test' }]]);
  });
});
