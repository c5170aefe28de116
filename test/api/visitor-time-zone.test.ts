import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopEvents } from '../fixtures/shop-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// journeys/stats and journeys/activity with `timezone` (an extension: the contract answers in UTC): first_seen,
// last_seen and the weekday and hour buckets in the zone, each worked out here from the fixture's rows with Intl,
// never by the code under test. Without `timezone` (and with `UTC`) the answers are the contract's.

const DOMAIN = 'shop.test';
const VISITORS = ['v1', 'v3', 'v4', 'v5'];
const ZONES = ['UTC', 'Asia/Kolkata', 'America/New_York', 'Pacific/Chatham'];

let api: TestApi;
let token: string;

beforeAll(async () => {
  api = await startTestApi();
  expect((await api.importEvents(shopEvents)).rejected).toEqual([]);
  token = (await api.createKey({ domains: [DOMAIN] })).token;
});
afterAll(async () => api?.close());

/** `YYYY-MM-DD HH:MM:SS`, ISO weekday (1 = Monday) and hour of an instant in `zone`. */
function wallClock(at: string, zone: string): { text: string; weekday: number; hour: number } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
    })
      .formatToParts(new Date(at))
      .map((p) => [p.type, p.value]),
  );
  const weekday = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(parts.weekday!) + 1;
  return {
    text: `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`,
    weekday,
    hour: Number(parts.hour),
  };
}

/** The visitor's rows of the domain, not dev. */
const rowsOf = (visitor: string) =>
  shopEvents.filter((e) => e.domain === DOMAIN && e.visitor_id === visitor && !(e as { is_dev?: boolean }).is_dev) as {
    timestamp: string;
    type: string;
  }[];

const ask = (path: string, body: Record<string, unknown>) =>
  api.request('POST', path, { token, body: { domain: DOMAIN, ...body } });

describe('one visitor in a time zone (extension)', () => {
  it.each(ZONES)('stats in %s: first and last seen on the wall clock of the zone', async (zone) => {
    for (const visitor of VISITORS) {
      const times = rowsOf(visitor)
        .map((r) => r.timestamp)
        .sort();
      const res = await ask('/v1/journeys/stats', { visitor_id: visitor, timezone: zone });
      expect(res.status, visitor).toBe(200);
      expect([res.body.data.first_seen, res.body.data.last_seen], `${visitor} ${zone}`).toEqual([
        wallClock(times[0]!, zone).text,
        wallClock(times[times.length - 1]!, zone).text,
      ]);
    }
  });

  it.each(ZONES)('activity in %s: pageviews per weekday and hour of the zone', async (zone) => {
    for (const visitor of VISITORS) {
      const buckets = new Map<string, number>();
      for (const row of rowsOf(visitor).filter((r) => r.type === 'pageview')) {
        const { weekday, hour } = wallClock(row.timestamp, zone);
        buckets.set(`${weekday} ${hour}`, (buckets.get(`${weekday} ${hour}`) ?? 0) + 1);
      }
      const expected = [...buckets]
        .map(([key, pageviews]) => {
          const [day, hour] = key.split(' ').map(Number);
          return { day_of_week: day!, hour_of_day: hour!, pageviews, unique_visitors: 1 };
        })
        .sort((a, b) => a.day_of_week - b.day_of_week || a.hour_of_day - b.hour_of_day);
      const res = await ask('/v1/journeys/activity', { visitor_id: visitor, timezone: zone });
      expect(res.status, visitor).toBe(200);
      expect(res.body.data, `${visitor} ${zone}`).toEqual(expected);
    }
  });

  it('answers in UTC without a zone, as the contract does; a zone that is not one is a 400 naming the field', async () => {
    for (const path of ['/v1/journeys/stats', '/v1/journeys/activity']) {
      const plain = await ask(path, { visitor_id: 'v5' });
      const utc = await ask(path, { visitor_id: 'v5', timezone: 'UTC' });
      expect(utc.body.data).toEqual(plain.body.data);
      const wrong = await ask(path, { visitor_id: 'v5', timezone: 'Mars/Base' });
      expect(wrong.status).toBe(400);
      expect(wrong.body.message).toMatch(/timezone/);
    }
    // v5's one row is 03-04 00:30 UTC, a Wednesday; in New York it is Tuesday 19:30.
    const nyc = await ask('/v1/journeys/activity', { visitor_id: 'v5', timezone: 'America/New_York' });
    expect(nyc.body.data.map((b: any) => [b.day_of_week, b.hour_of_day])).toEqual([[2, 19]]);
  });
});
