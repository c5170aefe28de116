import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';

// axe-core (MPL-2.0, a test dependency) in a page: the WCAG 2.0, 2.1 and 2.2 A and AA rules, run on what the page
// shows now. Returns each violation as `rule: target` lines, so a failing test names the element.

const source = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WCAG_22_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa'];

export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(source);
  const result = (await page.evaluate(
    (tags) =>
      (globalThis as any).axe.run((globalThis as any).document, {
        runOnly: { type: 'tag', values: tags },
        resultTypes: ['violations'],
      }),
    WCAG_22_AA,
  )) as { violations: { id: string; nodes: { target: string[]; failureSummary?: string }[] }[] };
  return result.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(' ')}`));
}
