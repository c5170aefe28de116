import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Dataset } from './dataset.js';
import { ensureInstalled, exportCsv, freePort, literal, run, utcText, waitFor } from './peers.js';
import { pageSizeOf, rangeOf, type MixId, type MixQuery } from './query-mix.js';
import { rowsFromSql, type BenchEngine, type RunResult } from './results.js';

// (c) ClickHouse, what Plausible runs on: Debian's clickhouse-server on 127.0.0.1, the same rows in a MergeTree
// ordered by (domain, toDate(ts), visitor_id), and each query of the mix written by hand in ClickHouse SQL
// after docs/API.md (exact uniqExact for visitors, sessions measured over all their rows in the range, a
// session's dimension value from its first row). Debian ships 18.16, which has no DateTime64: `ts` holds
// seconds for filtering and bucketing, `ts_ms` the milliseconds for durations and ordering.

/** Stored columns: name, ClickHouse type, and the DuckDB expression that exports it from the Parquet rows. */
const columns: [string, string, string][] = [
  ['domain', 'String', 'domain'],
  ['ts', 'DateTime', `strftime(ts, '%Y-%m-%d %H:%M:%S')`],
  ['ts_ms', 'Int64', 'epoch_ms(ts)'],
  ...[
    'type',
    'visitor_id',
    'session_id',
    'url_path',
    'referrer_domain',
    'utm_source',
    'utm_medium',
    'utm_campaign',
    'utm_content',
    'utm_term',
    'country',
    'region',
    'city',
    'browser',
    'os',
    'device',
    'event_name',
    'event_properties',
  ].map((c): [string, string, string] => [c, 'String', `coalesce(${c}, '')`]),
  ['amount_cents', 'Int64', 'coalesce(amount_cents, 0)'],
  ['is_dev', 'UInt8', 'CAST(is_dev AS INTEGER)'],
];

export class ClickHouse implements BenchEngine {
  readonly name = 'clickhouse';
  version = '';
  private table = '';

  private constructor(
    private readonly server: ChildProcess,
    private readonly httpPort: number,
    private readonly tcpPort: number,
  ) {}

  /** Installs (when missing) and starts a server on free loopback ports; a reason instead when it cannot. */
  static async start(root: string, log: (line: string) => void): Promise<ClickHouse | string> {
    const missing = ensureInstalled('clickhouse-server', ['clickhouse-server', 'clickhouse-client'], log);
    if (missing) return missing;
    const dir = join(root, 'clickhouse');
    mkdirSync(join(dir, 'data'), { recursive: true });
    const [httpPort, tcpPort] = [await freePort(), await freePort()];
    writeFileSync(join(dir, 'users.xml'), usersXml);
    writeFileSync(join(dir, 'config.xml'), configXml(dir, httpPort, tcpPort));
    const server = spawn('clickhouse-server', ['--config-file', join(dir, 'config.xml')], {
      cwd: dir,
      stdio: 'ignore',
    });
    const exited = new Promise<string>((done) =>
      server.once('exit', (code) => done(`clickhouse-server exited with code ${code}; see ${dir}/server.err.log`)),
    );
    const failed = await Promise.race([
      waitFor(async () => (await fetch(`http://127.0.0.1:${httpPort}/ping`)).ok, 60_000, 'clickhouse-server').then(
        () => null,
        (e: Error) => e.message,
      ),
      exited,
    ]);
    if (failed) {
      server.kill('SIGKILL');
      return failed;
    }
    const engine = new ClickHouse(server, httpPort, tcpPort);
    engine.version = String((await engine.query('SELECT version() AS v'))[0]?.v);
    return engine;
  }

  /** Loads the data set unless a table of it with all its rows is already there (the server's data is kept). */
  async load(dataset: Dataset, exportDir: string, log: (line: string) => void): Promise<void> {
    this.table = `events_${dataset.id.replace(/[^a-zA-Z0-9]/g, '_')}`;
    const existing = await this.query(
      `SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = ${literal(this.table)}`,
    );
    if (
      Number(existing[0]?.n) > 0 &&
      Number((await this.query(`SELECT count() AS n FROM ${this.table}`))[0]?.n) === dataset.rows
    ) {
      log(`clickhouse: reusing table ${this.table}`);
      return;
    }
    const started = performance.now();
    await this.query(`DROP TABLE IF EXISTS ${this.table}`);
    await this.query(
      `CREATE TABLE ${this.table} (${columns.map(([name, type]) => `${name} ${type}`).join(', ')}) ` +
        `ENGINE = MergeTree() PARTITION BY toYYYYMM(ts) ORDER BY (domain, toDate(ts), visitor_id)`,
    );
    const file = join(exportDir, `${dataset.id}.clickhouse.csv`);
    await exportCsv(dataset, columns.map(([name, , expr]) => `${expr} AS ${name}`).join(', '), 'domain, ts', file);
    try {
      await run(
        'clickhouse-client',
        ['--host', '127.0.0.1', '--port', String(this.tcpPort), '--query', `INSERT INTO ${this.table} FORMAT CSV`],
        { inputFile: file },
      );
    } finally {
      rmSync(file, { force: true });
    }
    await this.query(`OPTIMIZE TABLE ${this.table} FINAL`);
    log(
      `clickhouse: loaded ${dataset.rows.toLocaleString('en-US')} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }

  async run(query: MixQuery): Promise<RunResult> {
    const sql = clickhouseSql[query.id](contextOf(query, this.table));
    const started = performance.now();
    const rows = await this.query(sql);
    return { ms: performance.now() - started, ...rowsFromSql(query, rows, pageSizeOf(query)) };
  }

  /** Bytes on disk of the loaded table (compressed), for the report. */
  async tableBytes(): Promise<number> {
    const [row] = await this.query(
      `SELECT sum(bytes) AS b FROM system.parts WHERE active AND table = ${literal(this.table)}`,
    );
    return Number(row?.b ?? 0);
  }

  async stop(): Promise<void> {
    const exited = new Promise((done) => this.server.once('exit', done));
    this.server.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    if (this.server.exitCode === null) this.server.kill('SIGKILL');
  }

  private async query(sql: string): Promise<Record<string, unknown>[]> {
    const isSelect = /^\s*(SELECT|WITH)/i.test(sql);
    const res = await fetch(`http://127.0.0.1:${this.httpPort}/`, {
      method: 'POST',
      body: isSelect ? `${sql} FORMAT JSON` : sql,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`clickhouse: ${text.trim().slice(0, 500)}`);
    return isSelect ? (JSON.parse(text) as { data: Record<string, unknown>[] }).data : [];
  }
}

interface Context {
  table: string;
  /** The scope every query starts from: the domain, the range's instants, no dev rows. */
  base: string;
  tz: string;
}

function contextOf(query: MixQuery, table: string): Context {
  const range = rangeOf(query);
  const base = `domain = ${literal(query.body.domain)} AND ts >= toDateTime(${literal(utcText(range.from))}) AND ts < toDateTime(${literal(utcText(range.to))}) AND is_dev = 0`;
  return { table, base, tz: literal(range.timeZone) };
}

const label = (column: string, missing = '(not set)') => `if(${column} = '', '${missing}', ${column})`;
const rate = (part: string, whole: string) => `if(${whole} = 0, 0, round(100 * ${part} / ${whole}, 2))`;

/** One row per session of the scope (optionally only those in `keep`), with its first row's value as d0. */
function sessions(c: Context, d0: string | null, keep = ''): string {
  return `SELECT session_id, countIf(type = 'pageview') AS pv, max(ts_ms) - min(ts_ms) AS duration_ms${d0 ? `, ${d0} AS d0` : ''}
    FROM ${c.table} WHERE ${c.base} AND session_id != ''${keep} GROUP BY session_id`;
}

const sessionMetrics = `${rate('countIf(pv = 1)', 'count()')} AS bounce_rate, if(count() = 0, 0, round(avg(duration_ms) / 1000, 2)) AS avg_session_duration`;

export const clickhouseSql: Record<MixId, (c: Context) => string> = {
  totals: (c) => `
    SELECT visitors, pageviews, bounce_rate, avg_session_duration FROM
      (SELECT 1 AS k, uniqExactIf(visitor_id, type = 'pageview') AS visitors, countIf(type = 'pageview') AS pageviews FROM ${c.table} WHERE ${c.base})
    ALL INNER JOIN
      (SELECT 1 AS k, ${sessionMetrics} FROM (${sessions(c, null)})) USING k`,

  top_pages: (c) => `
    SELECT d0, visitors, pageviews, bounce_rate FROM
      (SELECT ${label('url_path')} AS d0, uniqExact(visitor_id) AS visitors, count() AS pageviews FROM ${c.table} WHERE ${c.base} AND type = 'pageview' GROUP BY d0)
    ALL FULL OUTER JOIN
      (SELECT d0, ${rate('countIf(pv = 1)', 'count()')} AS bounce_rate FROM (${sessions(c, label(`argMinIf(url_path, ts_ms, type = 'pageview')`))}) GROUP BY d0) USING d0
    ORDER BY visitors DESC, d0 LIMIT 10`,

  top_referrers: (c) => `
    SELECT d0, visitors, bounce_rate FROM
      (SELECT ${label('referrer_domain', '(direct)')} AS d0, uniqExact(visitor_id) AS visitors FROM ${c.table} WHERE ${c.base} AND type = 'pageview' GROUP BY d0)
    ALL FULL OUTER JOIN
      (SELECT d0, ${rate('countIf(pv = 1)', 'count()')} AS bounce_rate FROM (${sessions(c, label('argMin(referrer_domain, ts_ms)', '(direct)'))}) GROUP BY d0) USING d0
    ORDER BY visitors DESC, d0 LIMIT 10`,

  countries: (c) => `
    SELECT ${label('country')} AS d0, uniqExact(visitor_id) AS visitors FROM ${c.table} WHERE ${c.base} AND type = 'pageview'
    GROUP BY d0 ORDER BY visitors DESC, d0 LIMIT 10`,

  devices: (c) => `
    SELECT d0, visitors, bounce_rate, avg_session_duration FROM
      (SELECT ${label('device')} AS d0, uniqExact(visitor_id) AS visitors FROM ${c.table} WHERE ${c.base} AND type = 'pageview' GROUP BY d0)
    ALL FULL OUTER JOIN
      (SELECT d0, ${sessionMetrics} FROM (${sessions(c, label('argMin(device, ts_ms)'))}) GROUP BY d0) USING d0
    ORDER BY visitors DESC, d0 LIMIT 100`,

  daily_ny: (c) => `
    SELECT d0, visitors, pageviews, bounce_rate FROM
      (SELECT toString(toDate(ts, ${c.tz})) AS d0, uniqExact(visitor_id) AS visitors, count() AS pageviews FROM ${c.table} WHERE ${c.base} AND type = 'pageview' GROUP BY d0)
    ALL FULL OUTER JOIN
      (SELECT d0, ${rate('countIf(pv = 1)', 'count()')} AS bounce_rate FROM (${sessions(c, `toString(toDate(min(ts), ${c.tz}))`)}) GROUP BY d0) USING d0
    ORDER BY d0 LIMIT 100`,

  hourly_kolkata: (c) => `
    SELECT formatDateTime(ts, '%Y-%m-%d %H:00:00', ${c.tz}) AS d0, uniqExact(visitor_id) AS visitors, count() AS pageviews
    FROM ${c.table} WHERE ${c.base} AND type = 'pageview' GROUP BY d0 ORDER BY d0 LIMIT 200`,

  country_device: (c) => `
    SELECT ${label('country')} AS d0, ${label('device')} AS d1, uniqExact(visitor_id) AS visitors, count() AS pageviews
    FROM ${c.table} WHERE ${c.base} AND type = 'pageview' GROUP BY d0, d1 ORDER BY visitors DESC, d0, d1 LIMIT 20`,

  events: (c) => `
    SELECT d0, uniqExact(visitor_id) AS visitors, count() AS pageviews
    FROM (SELECT visitor_id FROM ${c.table} WHERE ${c.base} AND type = 'pageview')
    ALL INNER JOIN (SELECT DISTINCT event_name AS d0, visitor_id FROM ${c.table} WHERE ${c.base} AND type = 'event') USING visitor_id
    GROUP BY d0 ORDER BY visitors DESC, d0 LIMIT 10`,

  page_filter: (c) => `
    SELECT d0, visitors, pageviews, bounce_rate FROM
      (SELECT ${label('referrer_domain', '(direct)')} AS d0, uniqExact(visitor_id) AS visitors, count() AS pageviews
       FROM ${c.table} WHERE ${c.base} AND type = 'pageview' AND url_path = '/pricing' GROUP BY d0)
    ALL FULL OUTER JOIN
      (SELECT d0, ${rate('countIf(pv = 1)', 'count()')} AS bounce_rate FROM (${sessions(
        c,
        label('argMin(referrer_domain, ts_ms)', '(direct)'),
        ` AND session_id IN (SELECT session_id FROM ${c.table} WHERE ${c.base} AND url_path = '/pricing')`,
      )}) GROUP BY d0) USING d0
    ORDER BY visitors DESC, d0 LIMIT 10`,

  property_filter: (c) => `
    SELECT ${label('url_path')} AS d0, uniqExact(visitor_id) AS visitors, count() AS pageviews
    FROM ${c.table} WHERE ${c.base} AND type = 'pageview'
      AND visitor_id IN (SELECT visitor_id FROM ${c.table} WHERE ${c.base} AND type = 'event' AND visitParamExtractString(event_properties, 'plan') = 'pro')
    GROUP BY d0 ORDER BY visitors DESC, d0 LIMIT 10`,

  revenue: (c) => `
    SELECT ${label('country')} AS d0, uniqExactIf(visitor_id, type = 'pageview') AS visitors, sumIf(amount_cents, type = 'revenue') AS revenue,
      uniqExactIf(visitor_id, type = 'revenue') AS conversions, ${rate('conversions', 'visitors')} AS conversion_rate
    FROM ${c.table} WHERE ${c.base} AND type IN ('pageview', 'revenue') GROUP BY d0 ORDER BY revenue DESC, d0 LIMIT 10`,

  // No window functions in 18.16: the visitor total is a second pass.
  journeys: (c) => {
    const first = (x: string) => `argMinIf(${x}, ts_ms, type = 'pageview')`;
    const shown = (ms: string) => `formatDateTime(toDateTime(intDiv(${ms}, 1000)), '%Y-%m-%d %H:%M:%S', ${c.tz})`;
    return `
    SELECT visitor_id, pageview_count, session_count, event_count, total_revenue_cents, revenue_event_count,
      ${shown('first_ms')} AS first_seen, ${shown('last_ms')} AS last_seen,
      if(latest_revenue_ms = 0, '', ${shown('latest_revenue_ms')}) AS latest_revenue_date,
      country, browser, os, device, first_referrer, entry_page,
      (SELECT uniqExact(visitor_id) FROM ${c.table} WHERE ${c.base}) AS total
    FROM (
      SELECT visitor_id, countIf(type = 'pageview') AS pageview_count, uniqExactIf(session_id, session_id != '') AS session_count,
        countIf(type = 'event') AS event_count, sumIf(amount_cents, type = 'revenue') AS total_revenue_cents, countIf(type = 'revenue') AS revenue_event_count,
        min(ts_ms) AS first_ms, max(ts_ms) AS last_ms, maxIf(ts_ms, type = 'revenue') AS latest_revenue_ms,
        ${first('country')} AS country, ${first('browser')} AS browser, ${first('os')} AS os, ${first('device')} AS device,
        ${first(label('referrer_domain', '(direct)'))} AS first_referrer, ${first('url_path')} AS entry_page
      FROM ${c.table} WHERE ${c.base} GROUP BY visitor_id)
    ORDER BY last_ms DESC, visitor_id LIMIT 50`;
  },
};

const usersXml = `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>10000000000</max_memory_usage><load_balancing>random</load_balancing></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`;

function configXml(dir: string, httpPort: number, tcpPort: number): string {
  return `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${dir}/server.log</log><errorlog>${dir}/server.err.log</errorlog><size>100M</size><count>1</count></logger>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/data/tmp/</tmp_path>
  <user_files_path>${dir}/data/user_files/</user_files_path>
  <format_schema_path>${dir}/data/format_schemas/</format_schema_path>
  <users_config>${dir}/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>1073741824</mark_cache_size>
  <max_concurrent_queries>20</max_concurrent_queries>
</yandex>
`;
}
