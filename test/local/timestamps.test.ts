import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTimestamp } from '../../shared/events/event-validation.js';

// The importer's timestamp rule (docs/EVENT-FORMAT.md) against an independent reading: a date is real when
// JavaScript's Date gives back the same fields, and the instant is Date.UTC of the fields minus the offset.

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

describe('parseTimestamp', () => {
  it('reads every real instant with any offset form, and refuses days a month does not have', () => {
    fc.assert(
      fc.property(
        fc.record({
          year: fc.integer({ min: 1971, max: 2098 }),
          month: fc.integer({ min: 1, max: 12 }),
          day: fc.integer({ min: 1, max: 31 }),
          hour: fc.integer({ min: 0, max: 23 }),
          minute: fc.integer({ min: 0, max: 59 }),
          second: fc.option(fc.integer({ min: 0, max: 59 })),
          fraction: fc.option(fc.stringMatching(/^\d{1,9}$/)),
          offset: fc.option(fc.record({ sign: fc.constantFrom('+', '-'), hours: fc.integer({ min: 0, max: 23 }), minutes: fc.integer({ min: 0, max: 59 }), form: fc.constantFrom('hh:mm', 'hhmm', 'hh') })),
        }),
        ({ year, month, day, hour, minute, second, fraction, offset }) => {
          let text = `${year}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}`;
          if (second !== null) text += `:${pad(second)}${fraction !== null ? `.${fraction}` : ''}`;
          const offsetMinutes = offset ? (offset.form === 'hh' ? 0 : offset.minutes) : 0;
          if (!offset) text += 'Z';
          else text += `${offset.sign}${pad(offset.hours)}${offset.form === 'hh:mm' ? `:${pad(offsetMinutes)}` : offset.form === 'hhmm' ? pad(offsetMinutes) : ''}`;
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

  it('refuses leap days of years that have none, and hours, minutes or offsets out of range', () => {
    expect(parseTimestamp('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    expect(parseTimestamp('2000-02-29T00:00:00Z')).toBe(Date.UTC(2000, 1, 29));
    for (const text of ['2026-02-29T00:00:00Z', '2100-02-29T00:00:00Z', '2026-13-01T00:00:00Z', '2026-00-10T00:00:00Z', '2026-01-00T00:00:00Z', '2026-01-01T24:00Z', '2026-01-01T10:60Z', '2026-01-01T10:00:60Z', '2026-01-01T10:00+24:00', '2026-01-01T10:00+01:60']) {
      expect(() => parseTimestamp(text), text).toThrow(/is not a real date and time/);
    }
    expect(() => parseTimestamp('0099-01-01T00:00:00Z')).toThrow(/lies outside/);
    expect(() => parseTimestamp('2100-01-01T00:00:00Z')).toThrow(/lies outside/);
    expect(() => parseTimestamp('1970-01-01T00:00:00+01:00')).toThrow(/lies outside/); // 1969-12-31T23:00Z
    expect(parseTimestamp('1970-01-01T00:00:00-01:00')).toBe(3_600_000);
  });
});
