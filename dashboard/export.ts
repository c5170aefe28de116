import Papa from 'papaparse';
import { strToU8, zipSync } from 'fflate';
import type { Filter, QueryBody, QueryRow } from './api';
import { cards, type ListTab, type Query } from './lists';

// The dashboard's exports: one list as CSV (a card's full list, as searched and sorted), and the whole view as a
// ZIP of CSVs, as Plausible's export gives it (docs/DECISIONS.md, "Dashboard"). Every file is the API's answers,
// read a page of 1000 rows at a time.

/** The rows one file holds at most: a list longer than this is cut, by the list's order (visitors first). */
export const EXPORT_MAX_ROWS = 10_000;
const PAGE = 1000;

/**
 * A table as CSV (RFC 4180, by papaparse): a cell a spreadsheet would run as a formula (one starting with =, +, -,
 * @, a tab or a carriage return; page paths and UTM values are anyone's to send) gets a leading `'`.
 */
export function toCsv(header: string[], rows: (string | number)[][]): string {
  return Papa.unparse({ fields: header, data: rows }, { escapeFormulae: true });
}

/** Every row of a query, page by page, up to EXPORT_MAX_ROWS; `cut` says whether rows were left out. */
export async function allRows(
  query: Query,
  body: Omit<QueryBody, 'domain' | 'limit' | 'offset'>,
): Promise<{ rows: QueryRow[]; cut: boolean }> {
  const rows: QueryRow[] = [];
  for (let offset = 0; offset < EXPORT_MAX_ROWS; offset += PAGE) {
    const page = await query({ ...body, limit: Math.min(PAGE, EXPORT_MAX_ROWS - offset), offset });
    rows.push(...page.data);
    if (!page.pagination.has_more) return { rows, cut: false };
  }
  return { rows, cut: true };
}

/** A list tab's rows as CSV: its name column, visitors, and its second column. */
export function listCsv(tab: ListTab, rows: QueryRow[]): string {
  return toCsv(
    [tab.dimension, 'visitors', tab.second.metric],
    rows.map((r) => [
      r.dimensions[tab.dimension] ?? '(not set)',
      r.metrics.visitors ?? 0,
      r.metrics[tab.second.metric] ?? 0,
    ]),
  );
}

/** A list tab's query: its dimension with visitors and its second column, the search as a `contains` filter. */
export function listBody(
  tab: ListTab,
  view: { filters: Filter[]; range: QueryBody['date_range'] },
  options: { search?: string; sort?: QueryBody['sort'] } = {},
): Omit<QueryBody, 'domain' | 'limit' | 'offset'> {
  const search = options.search?.trim();
  return {
    metrics: ['visitors', tab.second.metric],
    dimensions: [tab.dimension],
    date_range: view.range,
    filters: [...view.filters, ...(search ? [[tab.dimension, 'contains', search] as Filter] : [])],
    ...(options.sort ? { sort: options.sort } : {}),
  };
}

const tabFileNames: Partial<Record<ListTab['dimension'], string>> = {
  referrer: 'sources',
  page: 'pages',
  entry_page: 'entry_pages',
  exit_page: 'exit_pages',
  country: 'countries',
  region: 'regions',
  city: 'cities',
  browser: 'browsers',
  os: 'operating_systems',
  device: 'devices',
};

/**
 * The view as a ZIP of CSVs: `visitors.csv` (the totals per point of the chart: hour, day, week or month), one file
 * per tab of every card, and `custom_events.csv`; a `README.txt` names the view and any file cut at EXPORT_MAX_ROWS.
 */
export async function viewZip(
  query: Query,
  view: {
    domain: string;
    filters: Filter[];
    range: QueryBody['date_range'];
    timezone: string;
    time: 'minute' | 'hour' | 'date' | 'week' | 'month';
  },
): Promise<Uint8Array<ArrayBuffer>> {
  const files: Record<string, Uint8Array> = {};
  const cutFiles: string[] = [];
  const add = (name: string, csv: string, cut: boolean) => {
    files[name] = strToU8(csv);
    if (cut) cutFiles.push(name);
  };
  const { time } = view;
  const series = await allRows(query, {
    metrics: ['visitors', 'pageviews', 'visits', 'bounce_rate', 'avg_session_duration'],
    dimensions: [time],
    date_range: view.range,
    filters: view.filters,
  });
  add(
    'visitors.csv',
    toCsv(
      [time, 'visitors', 'pageviews', 'visits', 'bounce_rate', 'visit_duration'],
      series.rows.map((r) => [
        r.dimensions[time] ?? '',
        r.metrics.visitors ?? 0,
        r.metrics.pageviews ?? 0,
        r.metrics.visits ?? 0,
        r.metrics.bounce_rate ?? 0,
        r.metrics.avg_session_duration ?? 0,
      ]),
    ),
    series.cut,
  );
  for (const tab of cards.flatMap((c) => c.tabs)) {
    const { rows, cut } = await allRows(query, listBody(tab, view));
    add(`${tabFileNames[tab.dimension] ?? tab.dimension}.csv`, listCsv(tab, rows), cut);
  }
  const events = await allRows(query, {
    metrics: ['visitors', 'pageviews'],
    dimensions: ['event'],
    date_range: view.range,
    filters: view.filters,
  });
  add(
    'custom_events.csv',
    toCsv(
      ['event', 'visitors', 'pageviews'],
      events.rows.map((r) => [r.dimensions.event ?? '', r.metrics.visitors ?? 0, r.metrics.pageviews ?? 0]),
    ),
    events.cut,
  );
  const about = [
    `${view.domain}, ${Array.isArray(view.range) ? view.range.join(' to ') : view.range}, ${view.timezone}`,
    `filters: ${view.filters.length ? JSON.stringify(view.filters) : 'none'}`,
    'Numbers as POST /v1/query answers them; visit_duration in seconds, bounce_rate in percent.',
    ...(cutFiles.length ? [`Cut at ${EXPORT_MAX_ROWS} rows (the first by visitors): ${cutFiles.join(', ')}`] : []),
  ];
  files['README.txt'] = strToU8(`${about.join('\n')}\n`);
  return zipSync(files) as Uint8Array<ArrayBuffer>;
}

/** Hands `content` to the browser as a download named `name`. */
export function download(name: string, content: Uint8Array<ArrayBuffer> | string, type: string): void {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
