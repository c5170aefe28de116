import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Dataset } from './dataset.js';
import { ensureInstalled, exportCsv, freePort, literal, run, utcText } from './peers.js';
import { pageSizeOf, rangeOf, type MixId, type MixQuery } from './query-mix.js';
import { rowsFromSql, type BenchEngine, type RunResult } from './results.js';

// (d) PostgreSQL 15, what self-hosted Umami runs on: Debian's server in a cluster of our own on 127.0.0.1, the
// same rows in one table with a (domain, ts) index, and each query of the mix written by hand after
// docs/API.md. Timed by psql's `\timing` (the server round trip, without psql's start-up and connection).

const BIN = '/usr/lib/postgresql/15/bin';

/** Settings a careful self-hoster would give a 2-core, 24 GiB machine; everything else is the default. */
const serverSettings = {
  listen_addresses: '127.0.0.1',
  shared_buffers: '4GB',
  work_mem: '256MB',
  maintenance_work_mem: '1GB',
  effective_cache_size: '12GB',
  max_parallel_workers_per_gather: '2',
  random_page_cost: '1.1',
  max_wal_size: '8GB',
  synchronous_commit: 'off',
};

const columns: [string, string][] = [
  ['domain', 'text'],
  ['ts', 'timestamp(3)'],
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
  ].map((c): [string, string] => [c, 'text']),
  ['event_properties', 'jsonb'],
  ['amount_cents', 'bigint'],
  ['is_dev', 'boolean'],
];

export class Postgres implements BenchEngine {
  readonly name = 'postgres';
  version = '';
  private table = '';

  private constructor(
    private readonly dataDir: string,
    private readonly port: number,
  ) {}

  /** Installs (when missing), creates the cluster once and starts it on a free loopback port; a reason when it cannot. */
  static async start(root: string, log: (line: string) => void): Promise<Postgres | string> {
    const missing = ensureInstalled(`${BIN}/postgres`, ['postgresql-15'], log);
    if (missing) return missing;
    const dir = join(root, 'postgres');
    const dataDir = join(dir, 'data');
    const socketDir = join(dir, 'run');
    try {
      mkdirSync(socketDir, { recursive: true });
      if (isRoot()) {
        const { uid, gid } = postgresUser();
        for (const d of [dir, socketDir]) chownSync(d, uid, gid);
      }
      if (!existsSync(join(dataDir, 'PG_VERSION'))) {
        rmSync(dataDir, { recursive: true, force: true });
        await asPostgres(`${BIN}/initdb`, [
          '-D',
          dataDir,
          '-U',
          'postgres',
          '--auth=trust',
          '--locale=C',
          '--encoding=UTF8',
        ]);
      }
      const port = await freePort();
      const options = [
        `-p ${port}`,
        `-c unix_socket_directories=${socketDir}`,
        ...Object.entries(serverSettings).map(([k, v]) => `-c ${k}=${v}`),
      ].join(' ');
      await asPostgres(`${BIN}/pg_ctl`, [
        '-D',
        dataDir,
        '-l',
        join(dir, 'server.log'),
        '-o',
        options,
        '-w',
        '-t',
        '60',
        'start',
      ]);
      const engine = new Postgres(dataDir, port);
      engine.version = (await engine.psql(['-At', '-c', 'SHOW server_version'])).trim();
      return engine;
    } catch (error) {
      return `postgresql could not start: ${(error as Error).message}`;
    }
  }

  /** Loads the data set unless a complete copy is already there (the cluster is kept between runs). */
  async load(dataset: Dataset, exportDir: string, log: (line: string) => void): Promise<void> {
    this.table = `events_${dataset.id.replace(/[^a-zA-Z0-9]/g, '_')}`.toLowerCase();
    await this.psql(['-c', 'CREATE TABLE IF NOT EXISTS bench_loaded (name text PRIMARY KEY)']);
    if (
      (
        await this.psql(['-At', '-c', `SELECT count(*) FROM bench_loaded WHERE name = ${literal(this.table)}`])
      ).trim() === '1'
    ) {
      log(`postgres: reusing table ${this.table}`);
      return;
    }
    const started = performance.now();
    await this.psql([
      '-c',
      `DROP TABLE IF EXISTS ${this.table}`,
      '-c',
      `CREATE TABLE ${this.table} (${columns.map(([n, t]) => `${n} ${t}`).join(', ')})`,
    ]);
    const file = join(exportDir, `${dataset.id}.postgres.csv`);
    const exportOf = (c: string) => (c === 'ts' ? 'CAST(ts AS VARCHAR)' : c);
    await exportCsv(dataset, columns.map(([c]) => `${exportOf(c)} AS ${c}`).join(', '), 'domain, ts', file);
    try {
      await this.psql(['-c', `\\copy ${this.table} FROM ${literal(file)} WITH (FORMAT csv)`]);
    } finally {
      rmSync(file, { force: true });
    }
    await this.psql(['-c', `CREATE INDEX ON ${this.table} (domain, ts)`, '-c', `VACUUM ANALYZE ${this.table}`]);
    await this.psql(['-c', `INSERT INTO bench_loaded VALUES (${literal(this.table)})`]);
    log(
      `postgres: loaded ${dataset.rows.toLocaleString('en-US')} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }

  async run(query: MixQuery): Promise<RunResult> {
    const sql = postgresSql[query.id](contextOf(query, this.table));
    const out = await this.psql(['--csv', '-c', '\\timing on', '-c', sql.replace(/\s+/g, ' ')]);
    const time = /Time: ([\d.]+) ms/.exec(out);
    if (!time) throw new Error(`psql printed no timing: ${out.slice(0, 300)}`);
    const [header, ...lines] = parseCsv(out.slice(0, time.index).replace(/^Timing is on\.\n/, ''));
    const rows = lines.map((cells) =>
      Object.fromEntries(header!.map((name, i) => [name, cells[i] === '' ? null : cells[i]])),
    );
    return { ms: Number(time[1]), ...rowsFromSql(query, rows, pageSizeOf(query)) };
  }

  async tableBytes(): Promise<number> {
    return Number((await this.psql(['-At', '-c', `SELECT pg_total_relation_size(${literal(this.table)})`])).trim());
  }

  async stop(): Promise<void> {
    await asPostgres(`${BIN}/pg_ctl`, ['-D', this.dataDir, '-m', 'fast', '-w', 'stop']).catch(() => undefined);
  }

  private psql(args: string[]): Promise<string> {
    return run('psql', [
      '-X',
      '-q',
      '-v',
      'ON_ERROR_STOP=1',
      '-h',
      '127.0.0.1',
      '-p',
      String(this.port),
      '-U',
      'postgres',
      '-d',
      'postgres',
      ...args,
    ]);
  }
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** The postgres user's uid and gid (the Debian package creates the user). */
function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** initdb and pg_ctl refuse to run as root: as root they run as the postgres user. */
function asPostgres(command: string, args: string[]): Promise<string> {
  return isRoot() ? run('runuser', ['-u', 'postgres', '--', command, ...args], { cwd: '/tmp' }) : run(command, args);
}

/** RFC 4180 CSV as psql --csv writes it. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += ch;
  }
  if (cell !== '' || row.length) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

interface Context {
  table: string;
  base: string;
  tz: string;
}

function contextOf(query: MixQuery, table: string): Context {
  const range = rangeOf(query);
  return {
    table,
    base: `domain = ${literal(query.body.domain)} AND ts >= ${literal(utcText(range.from))} AND ts < ${literal(utcText(range.to))} AND NOT is_dev`,
    tz: literal(range.timeZone),
  };
}

const label = (column: string, missing = '(not set)') => `coalesce(nullif(${column}, ''), '${missing}')`;
const rate = (part: string, whole: string) =>
  `CASE WHEN ${whole} = 0 THEN 0 ELSE round(100.0 * ${part} / ${whole}, 2) END`;
const local = (c: Context, ts: string) => `((${ts} AT TIME ZONE 'UTC') AT TIME ZONE ${c.tz})`;
/** The value on a session's or visitor's first row (first pageview with `pageviewsOnly`), NULL kept. */
const first = (x: string, pageviewsOnly = false) =>
  `(array_agg(${x} ORDER BY ts)${pageviewsOnly ? ` FILTER (WHERE type = 'pageview')` : ''})[1]`;

function sessions(c: Context, d0: string | null, keep = ''): string {
  return `SELECT session_id, count(*) FILTER (WHERE type = 'pageview') AS pv, extract(epoch FROM max(ts) - min(ts)) * 1000 AS duration_ms${d0 ? `, ${d0} AS d0` : ''}
    FROM ${c.table} WHERE ${c.base} AND session_id <> ''${keep} GROUP BY session_id`;
}

const bounceRate = `${rate(`count(*) FILTER (WHERE pv = 1)`, 'count(*)')} AS bounce_rate`;
const sessionMetrics = `${bounceRate}, coalesce(round((avg(duration_ms) / 1000)::numeric, 2), 0) AS avg_session_duration`;

export const postgresSql: Record<MixId, (c: Context) => string> = {
  totals: (c) => `
    SELECT r.visitors, r.pageviews, s.bounce_rate, s.avg_session_duration FROM
      (SELECT count(DISTINCT visitor_id) FILTER (WHERE type = 'pageview') AS visitors, count(*) FILTER (WHERE type = 'pageview') AS pageviews
       FROM ${c.table} WHERE ${c.base}) r
    CROSS JOIN (SELECT ${sessionMetrics} FROM (${sessions(c, null)}) x) s`,

  top_pages: (c) => `
    SELECT d0, coalesce(visitors, 0) AS visitors, coalesce(pageviews, 0) AS pageviews, coalesce(bounce_rate, 0) AS bounce_rate FROM
      (SELECT ${label('url_path')} AS d0, count(DISTINCT visitor_id) AS visitors, count(*) AS pageviews FROM ${c.table} WHERE ${c.base} AND type = 'pageview' GROUP BY 1) r
    FULL JOIN (SELECT d0, ${bounceRate} FROM (${sessions(c, label(first('url_path', true)))}) x GROUP BY d0) s USING (d0)
    ORDER BY visitors DESC, d0 LIMIT 10`,

  top_referrers: (c) => `
    SELECT d0, coalesce(visitors, 0) AS visitors, coalesce(bounce_rate, 0) AS bounce_rate FROM
      (SELECT ${label('referrer_domain', '(direct)')} AS d0, count(DISTINCT visitor_id) AS visitors FROM ${c.table} WHERE ${c.base} AND type = 'pageview' GROUP BY 1) r
    FULL JOIN (SELECT d0, ${bounceRate} FROM (${sessions(c, label(first('referrer_domain'), '(direct)'))}) x GROUP BY d0) s USING (d0)
    ORDER BY visitors DESC, d0 LIMIT 10`,

  countries: (c) => `
    SELECT ${label('country')} AS d0, count(DISTINCT visitor_id) AS visitors FROM ${c.table} WHERE ${c.base} AND type = 'pageview'
    GROUP BY 1 ORDER BY visitors DESC, d0 LIMIT 10`,

  devices: (c) => `
    SELECT d0, coalesce(visitors, 0) AS visitors, coalesce(bounce_rate, 0) AS bounce_rate, coalesce(avg_session_duration, 0) AS avg_session_duration FROM
      (SELECT ${label('device')} AS d0, count(DISTINCT visitor_id) AS visitors FROM ${c.table} WHERE ${c.base} AND type = 'pageview' GROUP BY 1) r
    FULL JOIN (SELECT d0, ${sessionMetrics} FROM (${sessions(c, label(first('device')))}) x GROUP BY d0) s USING (d0)
    ORDER BY visitors DESC, d0 LIMIT 100`,

  daily_ny: (c) => `
    SELECT d0, coalesce(visitors, 0) AS visitors, coalesce(pageviews, 0) AS pageviews, coalesce(bounce_rate, 0) AS bounce_rate FROM
      (SELECT ${local(c, 'ts')}::date::text AS d0, count(DISTINCT visitor_id) AS visitors, count(*) AS pageviews FROM ${c.table} WHERE ${c.base} AND type = 'pageview' GROUP BY 1) r
    FULL JOIN (SELECT d0, ${bounceRate} FROM (${sessions(c, `${local(c, 'min(ts)')}::date::text`)}) x GROUP BY d0) s USING (d0)
    ORDER BY d0 LIMIT 100`,

  hourly_kolkata: (c) => `
    SELECT to_char(date_trunc('hour', ${local(c, 'ts')}), 'YYYY-MM-DD HH24:00:00') AS d0, count(DISTINCT visitor_id) AS visitors, count(*) AS pageviews
    FROM ${c.table} WHERE ${c.base} AND type = 'pageview' GROUP BY 1 ORDER BY d0 LIMIT 200`,

  country_device: (c) => `
    SELECT ${label('country')} AS d0, ${label('device')} AS d1, count(DISTINCT visitor_id) AS visitors, count(*) AS pageviews
    FROM ${c.table} WHERE ${c.base} AND type = 'pageview' GROUP BY 1, 2 ORDER BY visitors DESC, d0, d1 LIMIT 20`,

  events: (c) => `
    SELECT e.d0, count(DISTINCT p.visitor_id) AS visitors, count(*) AS pageviews
    FROM (SELECT visitor_id FROM ${c.table} WHERE ${c.base} AND type = 'pageview') p
    JOIN (SELECT DISTINCT event_name AS d0, visitor_id FROM ${c.table} WHERE ${c.base} AND type = 'event') e USING (visitor_id)
    GROUP BY e.d0 ORDER BY visitors DESC, d0 LIMIT 10`,

  page_filter: (c) => `
    SELECT d0, coalesce(visitors, 0) AS visitors, coalesce(pageviews, 0) AS pageviews, coalesce(bounce_rate, 0) AS bounce_rate FROM
      (SELECT ${label('referrer_domain', '(direct)')} AS d0, count(DISTINCT visitor_id) AS visitors, count(*) AS pageviews
       FROM ${c.table} WHERE ${c.base} AND type = 'pageview' AND url_path = '/pricing' GROUP BY 1) r
    FULL JOIN (SELECT d0, ${bounceRate} FROM (${sessions(
      c,
      label(first('referrer_domain'), '(direct)'),
      ` AND session_id IN (SELECT session_id FROM ${c.table} WHERE ${c.base} AND url_path = '/pricing')`,
    )}) x GROUP BY d0) s USING (d0)
    ORDER BY visitors DESC, d0 LIMIT 10`,

  property_filter: (c) => `
    SELECT ${label('url_path')} AS d0, count(DISTINCT visitor_id) AS visitors, count(*) AS pageviews
    FROM ${c.table} WHERE ${c.base} AND type = 'pageview'
      AND visitor_id IN (SELECT visitor_id FROM ${c.table} WHERE ${c.base} AND type = 'event' AND event_properties->>'plan' = 'pro')
    GROUP BY 1 ORDER BY visitors DESC, d0 LIMIT 10`,

  revenue: (c) => `
    SELECT d0, visitors, revenue, conversions, ${rate('conversions', 'visitors')} AS conversion_rate FROM (
      SELECT ${label('country')} AS d0, count(DISTINCT visitor_id) FILTER (WHERE type = 'pageview') AS visitors,
        coalesce(sum(amount_cents) FILTER (WHERE type = 'revenue'), 0) AS revenue, count(DISTINCT visitor_id) FILTER (WHERE type = 'revenue') AS conversions
      FROM ${c.table} WHERE ${c.base} AND type IN ('pageview', 'revenue') GROUP BY 1) x
    ORDER BY revenue DESC, d0 LIMIT 10`,

  journeys: (c) => {
    const shown = (ts: string) => `to_char(${local(c, ts)}, 'YYYY-MM-DD HH24:MI:SS')`;
    return `
    SELECT visitor_id, pageview_count, session_count, event_count, total_revenue_cents, revenue_event_count,
      ${shown('first_ts')} AS first_seen, ${shown('last_ts')} AS last_seen, ${shown('latest_revenue_ts')} AS latest_revenue_date,
      country, browser, os, device, first_referrer, entry_page, count(*) OVER () AS total
    FROM (
      SELECT visitor_id, count(*) FILTER (WHERE type = 'pageview') AS pageview_count, count(DISTINCT session_id) FILTER (WHERE session_id <> '') AS session_count,
        count(*) FILTER (WHERE type = 'event') AS event_count, coalesce(sum(amount_cents) FILTER (WHERE type = 'revenue'), 0) AS total_revenue_cents,
        count(*) FILTER (WHERE type = 'revenue') AS revenue_event_count, min(ts) AS first_ts, max(ts) AS last_ts, max(ts) FILTER (WHERE type = 'revenue') AS latest_revenue_ts,
        ${['country', 'browser', 'os', 'device'].map((x) => `${first(x, true)} AS ${x}`).join(', ')},
        ${first(label('referrer_domain', '(direct)'), true)} AS first_referrer, ${first('url_path', true)} AS entry_page
      FROM ${c.table} WHERE ${c.base} GROUP BY visitor_id) v
    ORDER BY last_ts DESC, visitor_id LIMIT 50`;
  },
};
