import { globSync } from 'tinyglobby';
import { describe, expect, it } from 'vitest';
import { testTiers } from '../tiers.js';

// Every test file runs in exactly one tier: none is left out of `npm test`, none runs twice.

const ROOT = new URL('../../', import.meta.url).pathname;

describe('test tiers', () => {
  it('hold every test file exactly once', () => {
    const all = globSync('test/**/*.test.ts', { cwd: ROOT }).sort();
    const tiersOf = new Map<string, string[]>(all.map((f) => [f, []]));
    for (const [tier, patterns] of Object.entries(testTiers)) {
      for (const pattern of patterns) {
        const files = globSync(pattern, { cwd: ROOT });
        expect(files.length, `${tier}: ${pattern} names no file`).toBeGreaterThan(0);
        for (const file of files) tiersOf.get(file)?.push(tier);
      }
    }
    expect(
      [...tiersOf]
        .filter(([, tiers]) => tiers.length !== 1)
        .map(([file, tiers]) => `${file}: ${tiers.join(', ') || 'no tier'}`),
    ).toEqual([]);
  });
});
