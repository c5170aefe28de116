import type { Filter } from './api';
import { eventFilterFields, filterSchema, rowFilterFields, sessionPageFields } from '../shared/requests/filters';
import { isValidTimeZone, localDate, offsetSeconds } from '../shared/time/time-zone';

// What the dashboard shows, kept in the page's URL (`#view=...&range=...`), so a view can be bookmarked, shared and
// reached with the back button. The key is not part of it: it stays in this browser's localStorage.

export type Preset = 'realtime' | 'today' | '7d' | '14d' | '30d' | '90d' | '12mo' | 'all';
export type Range = Preset | [string, string];

/** What the cards' deltas and the chart's second line compare the range with. */
export type Comparison = 'previous' | 'year';

/** The chart's points for a range longer than a day (one day is drawn by the hour). */
export type ChartInterval = 'day' | 'week' | 'month';

export interface ViewState {
  view: 'overview' | 'journeys' | 'install';
  range: Range;
  compare: Comparison;
  interval: ChartInterval;
  timezone: string;
  filters: Filter[];
  /** The visitor whose journey is open (journeys view). */
  visitor?: string;
}

export const presets: { value: Preset; label: string }[] = [
  { value: 'realtime', label: 'Realtime (30 minutes)' },
  { value: 'today', label: 'Today' },
  { value: '7d', label: 'Last 7 days' },
  { value: '14d', label: 'Last 14 days' },
  { value: '30d', label: 'Last 30 days' },
  { value: '90d', label: 'Last 90 days' },
  { value: '12mo', label: 'Last 12 months' },
  { value: 'all', label: 'All time' },
];

export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** A filter as the API takes it ([field, operator, value], checked by the API's own schema). */
const urlFilter = filterSchema([...rowFilterFields, ...eventFilterFields, 'exit_link', ...sessionPageFields]);
const MAX_URL_FILTERS = 20;
const MAX_VISITOR_ID_LENGTH = 256;

/**
 * The view a URL fragment names. A link is anyone's to craft: whatever does not hold is left out (a filter the API
 * would refuse, a repeated one, an unknown time zone), so any link opens a working dashboard.
 */
const views = ['overview', 'journeys', 'install'] as const;

export function readState(hash: string): ViewState {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const range = params.get('range') ?? '30d';
  const custom = /^(\d{4}-\d{2}-\d{2}),(\d{4}-\d{2}-\d{2})$/.exec(range);
  let parsed: unknown;
  try {
    parsed = JSON.parse(params.get('filters') ?? '[]');
  } catch {
    parsed = [];
  }
  const filters: Filter[] = [];
  for (const item of Array.isArray(parsed) ? parsed : []) {
    if (filters.length === MAX_URL_FILTERS || !urlFilter.safeParse(item).success) continue;
    const filter = item as Filter;
    if (!filters.some((f) => JSON.stringify(f) === JSON.stringify(filter))) filters.push(filter);
  }
  const tz = params.get('tz');
  const visitor = params.get('visitor');
  const preset: Preset = presets.some((p) => p.value === range) ? (range as Preset) : '30d';
  return {
    view: views.find((v) => v === params.get('view')) ?? 'overview',
    range: custom ? [custom[1]!, custom[2]!] : preset,
    compare: params.get('compare') === 'year' ? 'year' : 'previous',
    interval: intervalOf(params.get('interval')),
    timezone: tz && isValidTimeZone(tz) ? tz : browserTimeZone(),
    filters,
    ...(visitor && visitor.length <= MAX_VISITOR_ID_LENGTH ? { visitor } : {}),
  };
}

function intervalOf(value: string | null): ChartInterval {
  return value === 'week' || value === 'month' ? value : 'day';
}

export function writeState(state: ViewState): string {
  const params = new URLSearchParams({
    view: state.view,
    range: Array.isArray(state.range) ? state.range.join(',') : state.range,
    tz: state.timezone,
  });
  if (state.compare !== 'previous') params.set('compare', state.compare);
  if (state.interval !== 'day') params.set('interval', state.interval);
  if (state.filters.length) params.set('filters', JSON.stringify(state.filters));
  if (state.visitor) params.set('visitor', state.visitor);
  return `#${params.toString()}`;
}

/** The period just before `[start, end]`, of the same number of days. */
export function previousPeriod([start, end]: [string, string]): [string, string] {
  const day = 86_400_000;
  const from = Date.parse(`${start}T00:00:00Z`);
  const to = Date.parse(`${end}T00:00:00Z`);
  const length = Math.round((to - from) / day) + 1;
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return [iso(from - length * day), iso(from - day)];
}

/** Today's date (YYYY-MM-DD) in `timeZone`, by the API's own rule for presets. */
export function todayIn(timeZone: string, now = new Date()): string {
  return localDate(timeZone, now.getTime());
}

/** The hour now in `timeZone`, as the API's `hour` dimension names it (`YYYY-MM-DD HH:00:00`). */
export function hourIn(timeZone: string, now = new Date()): string {
  const local = new Date(now.getTime() + offsetSeconds(timeZone, now.getTime()) * 1000).toISOString();
  return `${local.slice(0, 10)} ${local.slice(11, 13)}:00:00`;
}

/**
 * The range as the journeys endpoints take it: `today` is the dashboard's own preset (the API's presets end today
 * but start days before), sent as today's date in the view's zone; so is `realtime`, which they do not have.
 */
export function apiRange(state: ViewState): Exclude<Preset, 'today' | 'realtime'> | [string, string] {
  if (state.range === 'today' || state.range === 'realtime') {
    const today = todayIn(state.timezone);
    return [today, today];
  }
  return state.range;
}

/** The range as POST /v1/query takes it: `realtime` is its `30m` extension, the last 30 minutes. */
export function queryRange(state: ViewState): ReturnType<typeof apiRange> | '30m' {
  return state.range === 'realtime' ? '30m' : apiRange(state);
}

/** The minute now in `timeZone`, as the API's `minute` dimension names it (`YYYY-MM-DD HH:MM:00`). */
export function minuteIn(timeZone: string, now = new Date()): string {
  const local = new Date(now.getTime() + offsetSeconds(timeZone, now.getTime()) * 1000).toISOString();
  return `${local.slice(0, 10)} ${local.slice(11, 16)}:00`;
}

/** The same dates a year before (29 February becomes the 28th). */
export function yearBefore([start, end]: [string, string]): [string, string] {
  const back = (date: string) => {
    const [y, m, d] = date.split('-').map(Number) as [number, number, number];
    const last = new Date(Date.UTC(y - 1, m, 0)).getUTCDate();
    return `${y - 1}-${String(m).padStart(2, '0')}-${String(Math.min(d, last)).padStart(2, '0')}`;
  };
  return [back(start), back(end)];
}

/** The period the view compares `range` with. */
export function comparedPeriod(range: [string, string], compare: Comparison): [string, string] {
  return compare === 'year' ? yearBefore(range) : previousPeriod(range);
}
