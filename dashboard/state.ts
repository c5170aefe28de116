import type { Filter } from './api';

// What the dashboard shows, kept in the page's URL (`#view=...&range=...`), so a view can be bookmarked, shared and
// reached with the back button. The key is not part of it: it stays in this browser's localStorage.

export type Preset = '7d' | '14d' | '30d' | '90d' | '12mo' | 'all';
export type Range = Preset | [string, string];

export interface ViewState {
  view: 'overview' | 'journeys';
  range: Range;
  timezone: string;
  filters: Filter[];
  /** The visitor whose journey is open (journeys view). */
  visitor?: string;
}

export const presets: { value: Preset; label: string }[] = [
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

export function readState(hash: string): ViewState {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const range = params.get('range') ?? '30d';
  const custom = /^(\d{4}-\d{2}-\d{2}),(\d{4}-\d{2}-\d{2})$/.exec(range);
  let filters: Filter[];
  try {
    filters = JSON.parse(params.get('filters') ?? '[]') as Filter[];
  } catch {
    filters = [];
  }
  return {
    view: params.get('view') === 'journeys' ? 'journeys' : 'overview',
    range: custom ? [custom[1]!, custom[2]!] : presets.some((p) => p.value === range) ? (range as Preset) : '30d',
    timezone: params.get('tz') ?? browserTimeZone(),
    filters: Array.isArray(filters) ? filters : [],
    ...(params.get('visitor') ? { visitor: params.get('visitor')! } : {}),
  };
}

export function writeState(state: ViewState): string {
  const params = new URLSearchParams({ view: state.view, range: Array.isArray(state.range) ? state.range.join(',') : state.range, tz: state.timezone });
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
