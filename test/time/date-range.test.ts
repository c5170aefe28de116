import { describe, expect, it } from 'vitest';
import { EARLIEST_RANGE_DAY, resolveDateRange } from '../../shared/time/date-range.js';

describe('resolveDateRange', () => {
  const now = new Date('2026-11-23T10:00:00Z');

  it('presets end today in the zone: 7d is seven calendar days, 12mo starts on a month', async () => {
    expect(await resolveDateRange('7d', 'UTC', now, async () => null)).toMatchObject({
      start: '2026-11-17',
      end: '2026-11-23',
    });
    expect(await resolveDateRange('12mo', 'UTC', now, async () => null)).toMatchObject({
      start: '2025-12-01',
      end: '2026-11-23',
    });
    expect(await resolveDateRange('7d', 'Pacific/Kiritimati', now, async () => null)).toMatchObject({
      end: '2026-11-24',
    });
  });

  it('all starts at the first event, never before 1970, and is today alone without events', async () => {
    expect(await resolveDateRange('all', 'UTC', now, async () => new Date('2026-03-01T12:00:00Z'))).toMatchObject({
      start: '2026-03-01',
    });
    expect(
      await resolveDateRange('all', 'Europe/Berlin', now, async () => new Date('0001-06-01T00:00:00Z')),
    ).toMatchObject({ start: EARLIEST_RANGE_DAY });
    expect(await resolveDateRange('all', 'UTC', now, async () => null)).toMatchObject({
      start: '2026-11-23',
      end: '2026-11-23',
    });
  });
});
