import { describe, expect, it } from 'vitest';
import { checkLines } from '../../local/store/checked-batches.js';
import { checkEventLine } from '../../shared/events/event-validation.js';

// What a checked batch hands the importer: its accepted rows as UTF-8 NDJSON of the stored rows, byte for byte
// what the checks give, and the partitions and domains of those rows.

const event = (domain: string, timestamp: string, url: string, city: string | null) =>
  JSON.stringify({ type: 'pageview', domain, timestamp, visitor_id: 'v1', session_id: 's1', url_path: url, city, event_properties: { note: city ?? 'none' } });

describe('checkLines', () => {
  it('encodes every accepted row as UTF-8 NDJSON, multi-byte text included, and names the partitions of its rows', () => {
    const lines = [
      event('a.example', '2026-03-01T23:59:59.999Z', '/caf\u00e9', 'K\u00f8benhavn'),
      '{"type": "pageview"}',
      '',
      event('b.example', '2026-03-02T00:00:00Z', '/\u6771\u4eac', '\u6771\u4eac'),
      event('a.example', '2026-03-02T01:00:00+02:00', '/\u{1f600}/x', null),
      event('a.example', '2026-03-02T12:00:00Z', '/plain', 'Paris'),
    ];
    const batch = checkLines(lines);

    const expected = lines.map(checkEventLine).flatMap((r) => (r?.ok ? [JSON.stringify(r.event)] : []));
    expect(batch.accepted).toBe(4);
    expect(Buffer.from(batch.rows).toString('utf8')).toBe(`${expected.join('\n')}\n`);
    expect(batch.rows.byteLength).toBe(Buffer.byteLength(`${expected.join('\n')}\n`));
    // A value not set is left out of its row (read back as NULL), not written as null.
    const third = JSON.parse(Buffer.from(batch.rows).toString('utf8').split('\n')[2]!) as Record<string, unknown>;
    expect(third).toMatchObject({ url_path: '/\u{1f600}/x', session_id: 's1', is_dev: false });
    for (const absent of ['city', 'referrer', 'country', 'scroll_depth', 'amount_cents']) expect(third).not.toHaveProperty(absent);
    expect(batch.lines).toBe(6);
    expect(batch.rejected).toEqual([{ line: 2, reason: expect.stringContaining('missing required field') }]);
    expect(batch.domains).toEqual({ 'a.example': 3, 'b.example': 1 });
    expect(batch.partitions.sort()).toEqual(['a.example/2026-03-01', 'a.example/2026-03-02', 'b.example/2026-03-02']);
  });

  it('gives an empty buffer when no line is accepted', () => {
    const batch = checkLines(['not json', '']);
    expect(batch.accepted).toBe(0);
    expect(batch.rows.byteLength).toBe(0);
    expect(batch.partitions).toEqual([]);
    expect(batch.rejected.map((r) => r.line)).toEqual([1]);
  });
});
