import { readdirSync } from 'node:fs';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../infra/lambda-code.js';

// What each function's bundle is made of (esbuild's metafile, with the stack's entry points, format and externals):
// code that runs on AWS carries nothing of the local snapshot store, the local server or tools, the CLI or the
// tests. The writers' bundles (ingest, upkeep) take the store writer from writer/ and their S3 side from ingest/.

const functions = readdirSync(`${projectRoot}functions`).filter((f) => f.endsWith('.ts'));

async function inputsOf(entry: string): Promise<string[]> {
  const result = await build({
    entryPoints: [`${projectRoot}functions/${entry}`],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    external: ['@duckdb/node-api'],
    logLevel: 'silent',
    absWorkingDir: projectRoot,
  });
  return Object.keys(result.metafile.inputs).filter((p) => !p.startsWith('node_modules/'));
}

describe('function bundles', () => {
  it.each(functions)('%s carries no code of local/, cli/ or test/', async (entry) => {
    const inputs = await inputsOf(entry);
    expect(inputs.length).toBeGreaterThan(0);
    expect(inputs.filter((p) => /^(local|cli|test|bench|scripts)\//.test(p))).toEqual([]);
  });

  it('the ingest and upkeep functions write through writer/ and ingest/', async () => {
    for (const entry of ['ingest-events.ts', 'store-upkeep.ts']) {
      const inputs = await inputsOf(entry);
      expect(
        inputs.some((p) => p.startsWith('writer/')),
        entry,
      ).toBe(true);
      expect(
        inputs.some((p) => p.startsWith('ingest/')),
        entry,
      ).toBe(true);
    }
  });
});
