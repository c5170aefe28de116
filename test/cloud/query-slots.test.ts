import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releaseSlot, takeSlot } from '../../shared/store/slots-repo.js';
import { asFunction } from '../support/aws-rules/install.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// The stack's query slots (shared/store/slots-repo.ts) on dynalite, with DynamoDB's request rules held by the tests'
// AWS rules: never more holders than the limit, however many take at once; a dead holder's slot frees at its end.

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
}, 120_000);
afterAll(async () => {
  await api?.close();
});

describe('query slots', () => {
  it('lets at most `limit` holders in, however many take at once, and a released slot is taken again', async () => {
    const name = `slots-${randomUUID()}`;
    const takers = Array.from({ length: 12 }, () => randomUUID());
    const taken = await Promise.all(takers.map((holder) => takeSlot(name, holder, 3, 60_000)));
    // Each taker learns how many hold a slot with it: the engine polls less often the more run at once.
    expect(taken.filter((held) => held > 0).sort()).toEqual([1, 2, 3]);
    expect(await takeSlot(name, randomUUID(), 3, 60_000)).toBe(0);
    await releaseSlot(name, takers[taken.indexOf(2)]!);
    expect(await takeSlot(name, randomUUID(), 3, 60_000)).toBe(3);
    expect(await takeSlot(name, randomUUID(), 3, 60_000)).toBe(0);
  });

  it('frees the slot of a holder that died at the end of its hold, and only then', async () => {
    const name = `slots-${randomUUID()}`;
    const now = Date.now();
    expect(await takeSlot(name, 'died', 1, 10_000, now)).toBe(1);
    expect(await takeSlot(name, 'waiting', 1, 10_000, now + 9_000)).toBe(0);
    expect(await takeSlot(name, 'waiting', 1, 10_000, now + 11_000)).toBe(1);
    // The dead holder's late release does not free the slot another holds.
    await releaseSlot(name, 'died');
    expect(await takeSlot(name, 'third', 1, 10_000, now + 12_000)).toBe(0);
  });

  it("is what an analytics function's role allows: taking, sweeping and giving back run as the Query function", async () => {
    const name = `slots-${randomUUID()}`;
    const now = Date.now();
    await asFunction('Query', async () => {
      expect(await takeSlot(name, 'first', 1, 1_000, now)).toBe(1);
      // Full, with an expired hold: swept, then taken.
      expect(await takeSlot(name, 'second', 1, 1_000, now + 2_000)).toBe(1);
      await releaseSlot(name, 'second');
    });
  });
});
