import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryList } from '../../local/trino/trino-query-info.js';
import { JOURNEYS_RANGE, journeyEvents } from '../fixtures/journeys-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { trinoAvailable } from '../support/trino-available.js';

// `ANALYTICS_ENGINE=trino npm start` keeps the statements running on its Trino at once within a bound, across keys:
// a small Trino sent a dashboard load on many keys at once ran out of memory and stopped. The bound is the stack's
// own (the query slots of the Athena engine, in the local DynamoDB); requests past it wait for a slot.
// Shown with Trino's own record of when each of the store's statements ran.

const available = trinoAvailable('the local statement-bound suite');
const runIf = available ? describe : describe.skip;
const BOUND = 2;
let api: TestApi;
const tokens: string[] = [];

beforeAll(async () => {
  if (!available) return;
  api = await startTestApi({ engine: 'trino', trinoMaxConcurrentQueries: BOUND });
  await api.importEvents(journeyEvents);
  for (let i = 0; i < 6; i++) tokens.push((await api.createKey({ domains: ['journeys.test'] })).token);
}, 300_000);
afterAll(async () => api?.close());

/** The most of `intervals` that overlap at any instant. */
function mostAtOnce(intervals: readonly [number, number][]): number {
  const edges = intervals.flatMap(([from, to]) => [
    [from, 1],
    [to, -1],
  ]);
  // An end before a start at the same instant: touching intervals do not overlap.
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let now = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (now += step!));
  return most;
}

runIf('the bound on statements at once (local Trino path)', () => {
  it('six requests on six keys at once all answer, never more than the bound running on Trino', async () => {
    const since = Date.now();
    const bodies = [['page'], ['referrer'], ['country'], ['browser'], ['os'], ['device']].map((dimensions) => ({
      domain: 'journeys.test',
      metrics: ['visitors', 'pageviews', 'bounce_rate'],
      dimensions,
      date_range: JOURNEYS_RANGE,
    }));
    const answers = await Promise.all(
      bodies.map((body, i) => api.request('POST', '/v1/query', { token: tokens[i], body })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);

    const trino = api.trino!;
    const ran = (await queryList(trino.trino))
      .filter((q) => q.session.catalog === trino.catalog && q.session.source === 'athena-emulator')
      .filter((q) => Date.parse(q.queryStats.createTime) >= since - 1_000 && q.queryStats.endTime)
      .map((q): [number, number] => [Date.parse(q.queryStats.createTime), Date.parse(q.queryStats.endTime!)]);
    expect(ran.length).toBeGreaterThanOrEqual(6);
    expect(mostAtOnce(ran)).toBeLessThanOrEqual(BOUND);
  });
});

describe('mostAtOnce', () => {
  it('counts overlaps, not touching ends', () => {
    expect(
      mostAtOnce([
        [0, 10],
        [5, 15],
        [10, 20],
      ]),
    ).toBe(2);
    expect(
      mostAtOnce([
        [0, 10],
        [1, 9],
        [2, 8],
      ]),
    ).toBe(3);
  });
});
