import { describe, expect, it } from 'vitest';
import { checkLines } from '../../writer/checked-batches.js';
import { checkEventLine } from '../../shared/events/event-validation.js';

// What a checked batch hands the importer: its accepted rows as UTF-8 NDJSON of the stored rows, byte for byte
// what the checks give, grouped by partition, with each partition's facts and the domains of those rows.

const event = (domain: string, timestamp: string, url: string, city: string | null) =>
  JSON.stringify({
    type: 'pageview',
    domain,
    timestamp,
    visitor_id: 'v1',
    session_id: 's1',
    url_path: url,
    city,
    event_properties: { note: city ?? 'none' },
  });

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

    const stored = lines.map(checkEventLine).flatMap((r) => (r?.ok ? [JSON.stringify(r.event)] : []));
    expect(batch.accepted).toBe(4);
    // The rows of each partition together, in input order, each partition's bytes ending where it says (01:00 at
    // +02:00 is the UTC day before).
    const expected = [[stored[0]!, stored[2]!], [stored[3]!], [stored[1]!]];
    const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');
    expect(text(batch.rows)).toBe(expected.map((rows) => `${rows.join('\n')}\n`).join(''));
    expect(batch.partitions.map(({ key, rows }) => ({ key, rows }))).toEqual([
      { key: 'a.example/2026-03-01', rows: 2 },
      { key: 'a.example/2026-03-02', rows: 1 },
      { key: 'b.example/2026-03-02', rows: 1 },
    ]);
    const ends = batch.partitions.map((p) => p.rowsEnd);
    expect(ends.map((end, i) => text(batch.rows.subarray(i ? ends[i - 1] : 0, end)))).toEqual(
      expected.map((rows) => `${rows.join('\n')}\n`),
    );
    expect(batch.rows.byteLength).toBe(
      Buffer.byteLength(
        expected
          .flat()
          .map((row) => `${row}\n`)
          .join(''),
      ),
    );
    // A value not set is left out of its row (read back as NULL), not written as null.
    const emoji = JSON.parse(stored[2]!) as Record<string, unknown>;
    expect(emoji).toMatchObject({ url_path: '/\u{1f600}/x', session_id: 's1', is_dev: false });
    for (const absent of ['city', 'referrer', 'country', 'scroll_depth', 'amount_cents'])
      expect(emoji).not.toHaveProperty(absent);
    // The domain is the partition's, not the row's.
    expect(emoji).not.toHaveProperty('domain');
    expect(batch.lines).toBe(6);
    expect(batch.rejected).toEqual([{ line: 2, reason: expect.stringContaining('missing required field') }]);
    expect(batch.domains).toEqual({ 'a.example': 3, 'b.example': 1 });
  });

  it("names each partition's visitors (of any row) and its sessions once, as JSON lines beside its rows", () => {
    const at = (visitor: string, session: string, timestamp: string, type = 'pageview') =>
      JSON.stringify({
        type,
        domain: 'a.example',
        timestamp,
        visitor_id: visitor,
        session_id: session,
        url_path: '/',
        event_name: 'signup',
      });
    const revenue = JSON.stringify({
      type: 'revenue',
      domain: 'a.example',
      timestamp: '2026-03-01T10:00:00Z',
      visitor_id: 'paid',
      transaction_id: 't1',
      amount_cents: 100,
      currency: 'USD',
      revenue_event: 'order',
    });
    const batch = checkLines([
      at('v1', 's1', '2026-03-01T10:00:00Z'),
      at('v1', 's1', '2026-03-01T10:01:00Z'),
      at('v2', 's "2"', '2026-03-01T10:02:00Z', 'event'),
      revenue,
      at('v1', 's1', '2026-03-02T00:01:00Z'),
    ]);
    const factsOf = (i: number) =>
      Buffer.from(batch.facts.subarray(i ? batch.partitions[i - 1]!.factsEnd : 0, batch.partitions[i]!.factsEnd))
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as unknown);
    expect(batch.partitions.map((p) => p.key)).toEqual(['a.example/2026-03-01', 'a.example/2026-03-02']);
    // Every visitor is named (v2 sent no pageview, yet its visitor days need its key); the revenue row has no session.
    expect(factsOf(0)).toEqual([{ v: 'v1' }, { v: 'v2' }, { v: 'paid' }, { s: 's1' }, { s: 's "2"' }]);
    expect(factsOf(1)).toEqual([{ v: 'v1' }, { s: 's1' }]);
  });

  it('gives an empty buffer when no line is accepted', () => {
    const batch = checkLines(['not json', '']);
    expect(batch.accepted).toBe(0);
    expect(batch.rows.byteLength).toBe(0);
    expect(batch.facts.byteLength).toBe(0);
    expect(batch.partitions).toEqual([]);
    expect(batch.rejected.map((r) => r.line)).toEqual([1]);
  });
});

describe('numbers a double cannot keep', () => {
  const line = (properties: string) =>
    `{"type":"event","event_name":"signup","domain":"n.example","timestamp":"2026-03-01T12:00:00Z","visitor_id":"v1","session_id":"s1","url_path":"/","event_properties":${properties}}`;
  const stored = (properties: string) => {
    const result = checkEventLine(line(properties));
    return result?.ok ? JSON.parse(result.event.event_properties as string) : { rejected: result?.reason };
  };

  it('are refused by line, with the number and what it would have become, rather than stored changed', () => {
    expect(stored('{"id":12345678901234567891}')).toEqual({
      rejected: expect.stringMatching(/12345678901234567891.*12345678901234567000.*send it as a string/),
    });
    expect(stored('{"n":9007199254740993}').rejected).toMatch(/9007199254740993/);
    expect(stored('{"pi":3.14159265358979323846}').rejected).toMatch(/3\.14159265358979323846/);
    expect(stored('{"a":1,"b":{"x":"12345678901234567891"}}').rejected).toBeDefined(); // an object: not a property value
  });

  it('are kept when the double holds the written value, however it is spelled', () => {
    expect(stored('{"a":1.50,"b":1e20,"c":0.1,"d":-0,"e":9007199254740991,"f":2.5E-3}')).toEqual({
      a: '1.5',
      b: '100000000000000000000',
      c: '0.1',
      d: '0',
      e: '9007199254740991',
      f: '0.0025',
    });
    // Digits inside a string are text, not a number.
    expect(stored('{"id":"12345678901234567891","n":2}')).toEqual({ id: '12345678901234567891', n: '2' });
  });

  it('are judged only where they are stored: property values and scroll_depth, a repeated key by its last value', () => {
    const withExtra = line('{"n":2}').replace('{"type"', '{"extra":12345678901234567891,"type"');
    expect(checkEventLine(withExtra)?.ok).toBe(true);
    expect(stored('{"id":12345678901234567891,"id":5}')).toEqual({ id: '5' });
    const scroll = `{"type":"pageview","domain":"n.example","timestamp":"2026-03-01T12:00:00Z","visitor_id":"v1","session_id":"s1","url_path":"/","scroll_depth":50.0000000000000000001}`;
    expect(checkEventLine(scroll)).toEqual({
      ok: false,
      reason: expect.stringMatching(/^scroll_depth is the number 50\.0000000000000000001/),
    });
  });
});
