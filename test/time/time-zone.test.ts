import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays } from '../../shared/time/date-range.js';
import { localDate, startOfLocalDay } from '../../shared/time/time-zone.js';

// startOfLocalDay turns every range's days into instants: it must find the first instant of any day the API can
// name, in every zone the runtime knows (gaps at midnight, half- and quarter-hour offsets, a skipped day), and
// refuse anything else at once instead of stepping through a calendar it cannot read.

const zones = Intl.supportedValuesOf('timeZone');
const FIRST = Date.parse('1969-12-30T00:00:00Z');
const LAST = Date.parse('2100-01-02T00:00:00Z');
const dayArbitrary = fc.integer({ min: 0, max: (LAST - FIRST) / 86_400_000 }).map((n) => addDays('1969-12-30', n));

describe('startOfLocalDay', () => {
  it('gives the first instant of any day from 1969-12-30 to 2100-01-02 in any zone', () => {
    fc.assert(
      fc.property(dayArbitrary, fc.constantFrom(...zones), (day, zone) => {
        const start = startOfLocalDay(zone, day).getTime();
        // The day's first instant, or (a day the zone skipped) the first instant after it.
        expect(localDate(zone, start) >= day).toBe(true);
        expect(localDate(zone, start - 1000) < day).toBe(true);
      }),
      { numRuns: 3_000, seed: 5 },
    );
  });

  it('finds the days around known gaps and skips', () => {
    // Samoa skipped 2011-12-30; Havana's and Santiago's clocks jump at midnight; Lord Howe shifts by 30 minutes.
    expect(startOfLocalDay('Pacific/Apia', '2011-12-30').toISOString()).toBe('2011-12-30T10:00:00.000Z');
    expect(startOfLocalDay('America/Havana', '2026-03-08').toISOString()).toBe('2026-03-08T05:00:00.000Z');
    expect(startOfLocalDay('America/Santiago', '2026-09-06').toISOString()).toBe('2026-09-06T04:00:00.000Z');
    expect(startOfLocalDay('Australia/Lord_Howe', '2026-10-04').toISOString()).toBe('2026-10-03T13:30:00.000Z');
    expect(startOfLocalDay('UTC', '2100-01-01').toISOString()).toBe('2100-01-01T00:00:00.000Z');
  });

  it('refuses days it cannot read, at once', () => {
    for (const day of [
      '0000-01-01',
      '0099-12-31',
      '1969-12-29',
      '2100-01-03',
      '9999-12-31',
      '+010000-01-01',
      '2026-02-30',
      '2026-13-01',
      '2026-1-01',
      '',
      'today',
    ]) {
      expect(() => startOfLocalDay('America/New_York', day), day).toThrow(RangeError);
    }
  });
});
