import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTimestamp } from '../../shared/events/event-validation.js';

// The importer's timestamp rule (docs/EVENT-FORMAT.md) against an independent reading: a date is real when
// JavaScript's Date gives back the same fields, and the instant is Date.UTC of the fields minus the offset.

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Year to minute, in range or (`outOfRange`) each one past its bounds as well. */
const dateTimeFields = (years: [number, number], outOfRange: boolean) => ({
  year: fc.integer({ min: years[0], max: years[1] }),
  month: fc.integer({ min: outOfRange ? 0 : 1, max: outOfRange ? 13 : 12 }),
  day: fc.integer({ min: outOfRange ? 0 : 1, max: outOfRange ? 32 : 31 }),
  hour: fc.integer({ min: 0, max: outOfRange ? 24 : 23 }),
  minute: fc.integer({ min: 0, max: outOfRange ? 60 : 59 }),
});

describe('parseTimestamp', () => {
  it('reads every real instant with any offset form, and refuses days a month does not have', () => {
    fc.assert(
      fc.property(
        fc.record({
          ...dateTimeFields([1971, 2098], false),
          second: fc.option(fc.integer({ min: 0, max: 59 })),
          fraction: fc.option(fc.stringMatching(/^\d{1,9}$/)),
          offset: fc.option(
            fc.record({
              sign: fc.constantFrom('+', '-'),
              hours: fc.integer({ min: 0, max: 23 }),
              minutes: fc.integer({ min: 0, max: 59 }),
              form: fc.constantFrom('hh:mm', 'hhmm', 'hh'),
            }),
          ),
        }),
        ({ year, month, day, hour, minute, second, fraction, offset }) => {
          let text = `${year}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}`;
          if (second !== null) text += `:${pad(second)}${fraction !== null ? `.${fraction}` : ''}`;
          const offsetMinutes = offset ? (offset.form === 'hh' ? 0 : offset.minutes) : 0;
          if (!offset) text += 'Z';
          else
            text += `${offset.sign}${pad(offset.hours)}${offset.form === 'hh:mm' ? `:${pad(offsetMinutes)}` : offset.form === 'hhmm' ? pad(offsetMinutes) : ''}`;
          const millis = second !== null && fraction !== null ? Number(fraction.slice(0, 3).padEnd(3, '0')) : 0;
          const local = Date.UTC(year, month - 1, day, hour, minute, second ?? 0, millis);
          const back = new Date(local);
          if (back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day) {
            expect(() => parseTimestamp(text)).toThrow(/is not a real date and time/);
            return;
          }
          const sign = offset?.sign === '-' ? -1 : 1;
          expect(parseTimestamp(text)).toBe(local - sign * ((offset?.hours ?? 0) * 60 + offsetMinutes) * 60_000);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('reads the common form YYYY-MM-DDTHH:MM:SS.mmmZ as the independent reading does, fields out of range and non-digits included', () => {
    fc.assert(
      fc.property(
        fc.record({
          ...dateTimeFields([1965, 2105], true),
          second: fc.integer({ min: 0, max: 60 }),
          millis: fc.integer({ min: 0, max: 999 }),
          // One character replaced, sometimes: by a non-digit or a digit of another script.
          replace: fc.option(
            fc.record({ at: fc.integer({ min: 0, max: 23 }), by: fc.constantFrom('x', ' ', '/', '\u0661', '+') }),
          ),
        }),
        ({ year, month, day, hour, minute, second, millis, replace }) => {
          let text = `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}.${pad(millis, 3)}Z`;
          if (replace) text = text.slice(0, replace.at) + replace.by + text.slice(replace.at + 1);
          const fields = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/.exec(text);
          if (!fields) {
            // Not the common form: some other form may still read it (`+` for the zone), else a refusal.
            if (!/[+]/.test(text)) expect(() => parseTimestamp(text)).toThrow();
            return;
          }
          const [y, mo, d, h, mi, s, ms] = fields.slice(1).map(Number) as [
            number,
            number,
            number,
            number,
            number,
            number,
            number,
          ];
          const instant = Date.UTC(y, mo - 1, d, h, mi, s, ms);
          const back = new Date(instant);
          const real =
            mo >= 1 &&
            mo <= 12 &&
            back.getUTCMonth() === mo - 1 &&
            back.getUTCDate() === d &&
            h < 24 &&
            mi < 60 &&
            s < 60;
          if (!real) expect(() => parseTimestamp(text)).toThrow(/is not a real date and time|lies outside/);
          else if (y < 1970 || y > 2099) expect(() => parseTimestamp(text)).toThrow(/lies outside/);
          else expect(parseTimestamp(text)).toBe(instant);
        },
      ),
      { numRuns: 20000 },
    );
  });

  it('refuses leap days of years that have none, and hours, minutes or offsets out of range', () => {
    expect(parseTimestamp('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    expect(parseTimestamp('2000-02-29T00:00:00Z')).toBe(Date.UTC(2000, 1, 29));
    for (const text of [
      '2026-02-29T00:00:00Z',
      '2100-02-29T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-00-10T00:00:00Z',
      '2026-01-00T00:00:00Z',
      '2026-01-01T24:00Z',
      '2026-01-01T10:60Z',
      '2026-01-01T10:00:60Z',
      '2026-01-01T10:00+24:00',
      '2026-01-01T10:00+01:60',
    ]) {
      expect(() => parseTimestamp(text), text).toThrow(/is not a real date and time/);
    }
    expect(() => parseTimestamp('0099-01-01T00:00:00Z')).toThrow(/lies outside/);
    expect(() => parseTimestamp('2100-01-01T00:00:00Z')).toThrow(/lies outside/);
    expect(() => parseTimestamp('1970-01-01T00:00:00+01:00')).toThrow(/lies outside/); // 1969-12-31T23:00Z
    expect(parseTimestamp('1970-01-01T00:00:00-01:00')).toBe(3_600_000);
  });

  it('reads the common form to the first and last instant of EVENT_DAYS, and refuses the years Date.UTC would read as 19xx', () => {
    expect(parseTimestamp('1970-01-01T00:00:00.000Z')).toBe(0);
    expect(parseTimestamp('2099-12-31T23:59:59.999Z')).toBe(Date.UTC(2100, 0, 1) - 1);
    for (const text of [
      '2100-01-01T00:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '0070-06-01T00:00:00.000Z',
      '0099-12-31T23:59:59.999Z',
      '0000-01-01T00:00:00.000Z',
    ]) {
      expect(() => parseTimestamp(text), text).toThrow(/lies outside/);
    }
  });
});
