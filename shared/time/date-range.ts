import { localDate, startOfLocalDay } from './time-zone.js';

export const presets = ['7d', '14d', '30d', '90d', '12mo', 'all'] as const;
export type Preset = (typeof presets)[number];
export type DateRangeInput = Preset | readonly [string, string];

/** A resolved range: inclusive local dates, the UTC instants they span, and the `dt` partitions to read. */
export interface ResolvedRange {
  start: string;
  end: string;
  timeZone: string;
  /** First instant inside the range. */
  from: Date;
  /** First instant after the range. */
  to: Date;
  /** UTC dates of the partitions that can hold rows of [from, to). */
  dtFrom: string;
  dtTo: string;
}

const DAY_MS = 86_400_000;

/** `{ future_range: true }` for a range that starts after `now` (no stored event can be in it), else nothing. */
export function futureRangeNote(range: ResolvedRange, now: Date): { future_range?: true } {
  return range.from.getTime() > now.getTime() ? { future_range: true } : {};
}

/** The first day any range may start on. */
export const EARLIEST_RANGE_DAY = '1970-01-01';

export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * Resolves presets relative to today in `timeZone`. `firstEventAt` is asked only for `all` and may return null
 * when the domain has no rows (the range is then today alone).
 */
export async function resolveDateRange(
  input: DateRangeInput,
  timeZone: string,
  now: Date,
  firstEventAt: () => Promise<Date | null>,
): Promise<ResolvedRange> {
  const today = localDate(timeZone, now.getTime());
  let start: string;
  let end = today;
  if (Array.isArray(input)) {
    [start, end] = input as [string, string];
  } else if (input === 'all') {
    const first = await firstEventAt();
    start = first ? localDate(timeZone, first.getTime()) : today;
    if (start > today) start = today;
    // The same floor explicit dates have (schemas.ts): one ancient row must not make every `all` query of the
    // domain pay for decades of offset segments.
    if (start < EARLIEST_RANGE_DAY) start = EARLIEST_RANGE_DAY;
  } else if (input === '12mo') {
    const [y, m] = today.split('-').map(Number) as [number, number];
    start = new Date(Date.UTC(y, m - 1 - 11, 1)).toISOString().slice(0, 10);
  } else {
    start = addDays(today, -(Number.parseInt(input as string, 10) - 1));
  }
  return rangeOfDates(start, end, timeZone);
}

/**
 * The last `minutes` whole minutes up to and including the minute now (an extension of POST /v1/query, `30m`):
 * `start` and `end` are the local dates of its first and last instant.
 */
export function lastMinutes(minutes: number, timeZone: string, now: Date): ResolvedRange {
  const minute = 60_000;
  const to = new Date(Math.floor(now.getTime() / minute) * minute + minute);
  const from = new Date(to.getTime() - minutes * minute);
  return {
    start: localDate(timeZone, from.getTime()),
    end: localDate(timeZone, to.getTime() - 1),
    timeZone,
    from,
    to,
    dtFrom: from.toISOString().slice(0, 10),
    dtTo: new Date(to.getTime() - 1).toISOString().slice(0, 10),
  };
}

export function rangeOfDates(start: string, end: string, timeZone: string): ResolvedRange {
  const from = startOfLocalDay(timeZone, start);
  const to = startOfLocalDay(timeZone, addDays(end, 1));
  return {
    start,
    end,
    timeZone,
    from,
    to,
    dtFrom: from.toISOString().slice(0, 10),
    dtTo: new Date(to.getTime() - 1).toISOString().slice(0, 10),
  };
}
