import { isCalendarDate } from './calendar-date.js';

// Time-zone arithmetic done once per request in JavaScript, so SQL never converts zones row by row:
// local day boundaries become UTC instants, and a range becomes a few segments of constant UTC offset.

// Formatters are kept per canonical zone name (a few hundred exist), reached through the spellings requests used;
// both maps are bounded, so no sequence of requests, valid or not, grows them past a few hundred kilobytes.
const formatters = new Map<string, Intl.DateTimeFormat>();
const canonicalNames = new Map<string, string>();
const MAX_SPELLINGS = 2_048;

function formatter(timeZone: string): Intl.DateTimeFormat {
  const canonical = canonicalNames.get(timeZone);
  if (canonical) return formatters.get(canonical)!;
  const made = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const name = made.resolvedOptions().timeZone;
  if (!formatters.has(name)) formatters.set(name, made);
  if (canonicalNames.size >= MAX_SPELLINGS) canonicalNames.clear();
  canonicalNames.set(timeZone, name);
  return formatters.get(name)!;
}

/** How many formatters and spellings are kept (for the test that bounds them). */
export function timeZoneCacheSize(): { formatters: number; spellings: number } {
  return { formatters: formatters.size, spellings: canonicalNames.size };
}

export function isValidTimeZone(timeZone: string): boolean {
  if (timeZone.length === 0 || timeZone.length > 64) return false;
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** Offset of `timeZone` from UTC at instant `ms`, in seconds (local = UTC + offset). */
export function offsetSeconds(timeZone: string, ms: number): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return Math.round((wall - Math.floor(ms / 1000) * 1000) / 1000);
}

/** The local calendar date (`YYYY-MM-DD`) of instant `ms` in `timeZone`. */
export function localDate(timeZone: string, ms: number): string {
  return new Date(ms + offsetSeconds(timeZone, ms) * 1000).toISOString().slice(0, 10);
}

/** The local days startOfLocalDay answers for: the ranges' days (1970-2099) and the days either side of them. */
const LOCAL_DAYS = { first: '1969-12-30', last: '2100-01-02' };
const QUARTER_HOUR_MS = 15 * 60 * 1000;
const MAX_STEP_MS = 36 * 3600 * 1000;

/**
 * The first instant of local date `day` in `timeZone` (local midnight, or the first valid time after a gap).
 * `day` is a valid `YYYY-MM-DD` within LOCAL_DAYS: the zone arithmetic (Intl's years, ISO dates compared as text)
 * holds only for four-digit years, and every step below is bounded, so no input makes it loop.
 */
export function startOfLocalDay(timeZone: string, day: string): Date {
  if (!isCalendarDate(day) || day < LOCAL_DAYS.first || day > LOCAL_DAYS.last) {
    throw new RangeError(
      `startOfLocalDay: ${JSON.stringify(day)} is not a day from ${LOCAL_DAYS.first} to ${LOCAL_DAYS.last}`,
    );
  }
  const wall = Date.parse(`${day}T00:00:00Z`);
  let guess = wall - offsetSeconds(timeZone, wall) * 1000;
  guess = wall - offsetSeconds(timeZone, guess) * 1000;
  // In a gap at midnight the local day starts when the clock jumps: step forward until the date matches, then back
  // by seconds to the jump. Each within a day and a half (offsets lie within -12 and +14 hours, gaps last hours).
  for (let steps = 0; localDate(timeZone, guess) < day; steps++) {
    if (steps > MAX_STEP_MS / QUARTER_HOUR_MS)
      throw new RangeError(`startOfLocalDay: no start of ${day} found in ${timeZone}`);
    guess += QUARTER_HOUR_MS;
  }
  for (let steps = 0; localDate(timeZone, guess - 1000) === day; steps++) {
    if (steps > MAX_STEP_MS / 1000) throw new RangeError(`startOfLocalDay: no start of ${day} found in ${timeZone}`);
    guess -= 1000;
  }
  return new Date(guess);
}

export interface OffsetSegment {
  /** The segment applies to instants before this one; null for the last segment. */
  until: Date | null;
  offsetSeconds: number;
}

/** Segments of constant offset covering [from, to). Zones change offset at most a few times a year. */
export function offsetSegments(timeZone: string, from: Date, to: Date): OffsetSegment[] {
  const segments: OffsetSegment[] = [];
  const step = 24 * 3600 * 1000;
  let t = from.getTime();
  let current = offsetSeconds(timeZone, t);
  while (t < to.getTime()) {
    const next = Math.min(t + step, to.getTime());
    const nextOffset = offsetSeconds(timeZone, next);
    if (nextOffset !== current) {
      // Binary search the second the offset changes.
      let lo = t;
      let hi = next;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (offsetSeconds(timeZone, mid) === current) lo = mid;
        else hi = mid;
      }
      segments.push({ until: new Date(hi), offsetSeconds: current });
      current = nextOffset;
    }
    t = next;
  }
  segments.push({ until: null, offsetSeconds: current });
  return segments;
}
