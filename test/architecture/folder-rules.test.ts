import { readFileSync } from 'node:fs';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import { beforeAll, describe, expect, it } from 'vitest';

// The folder table of docs/ARCHITECTURE.md is a rule, not a picture: every import between the code's folders must be
// one its "may import" column allows. The table is read from the document, the imports from the code
// (dependency-cruiser resolving TypeScript as tsc does), so neither can drift from the other.

const ROOT = new URL('../../', import.meta.url).pathname;
const SOURCES = [
  'functions',
  'ingest',
  'writer',
  'shared',
  'infra',
  'local',
  'cli',
  'dashboard',
  'tracker',
  'test',
  'bench',
  'scripts',
];
/** The files at the root of shared/ that every folder may import (the table's text says so). */
const SHARED_ROOT_FILES = ['shared/config.ts', 'shared/log.ts', 'shared/routes.ts', 'shared/errors.ts'];

interface Rule {
  everything: boolean;
  allowed: string[];
  /** Folders this one may import types from only. */
  typesOnly: string[];
}

/** The table's rows: each backticked folder of the first cell, with the backticked folders of the last. */
function tableRules(markdown: string): Map<string, Rule> {
  const section = markdown.slice(
    markdown.indexOf('## Folders'),
    markdown.indexOf('\n## ', markdown.indexOf('## Folders') + 1),
  );
  const rules = new Map<string, Rule>();
  for (const line of section.split('\n').filter((l) => l.startsWith('| `'))) {
    const cells = line.split(' | ');
    const last = cells[cells.length - 1]!.replace(/\|\s*$/, '');
    const folders = [...cells[0]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const typesOnly = [...last.matchAll(/`([^`]+)` \(types\)/g)].map((m) => m[1]!);
    const allowed = [...last.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((f) => !typesOnly.includes(f));
    for (const folder of folders) rules.set(folder, { everything: /\beverything\b/.test(last), allowed, typesOnly });
  }
  return rules;
}

/** The table's folder a file belongs to: the longest row naming a prefix of its path. */
function folderOf(path: string, rules: Map<string, Rule>): string | undefined {
  return [...rules.keys()]
    .filter((f) => (f.endsWith('/') ? path.startsWith(f) : path === f))
    .sort((a, b) => b.length - a.length)[0];
}

const matches = (path: string, folders: string[]) =>
  folders.some((f) => (f.endsWith('/') ? path.startsWith(f) : path === f));

let rules: Map<string, Rule>;
let result: ICruiseResult;
beforeAll(async () => {
  rules = tableRules(readFileSync(`${ROOT}docs/ARCHITECTURE.md`, 'utf8'));
  const cruised = await cruise(
    SOURCES,
    {
      baseDir: ROOT,
      tsPreCompilationDeps: true,
      doNotFollow: { path: 'node_modules' },
      exclude: { path: ['node_modules', 'cdk\\.out', '\\.d\\.ts$'] },
    },
    undefined,
    { tsConfig: { fileName: `${ROOT}tsconfig.json` } },
  );
  result = cruised.output as ICruiseResult;
}, 120_000);

describe('the folder rules of docs/ARCHITECTURE.md', () => {
  it('are read from its table', () => {
    expect(rules.get('writer/')?.allowed).toContain('shared/query/');
    expect(rules.get('cli/')?.everything).toBe(true);
    expect(rules.get('shared/query/')?.typesOnly).toEqual(['shared/store/']);
    expect(rules.get('infra/')?.everything).toBe(false);
  });

  it('name every folder that holds code', () => {
    const unlisted = result.modules
      .map((m) => m.source)
      .filter(
        (s) =>
          !s.startsWith('node_modules') &&
          /\.(ts|tsx|mts)$/.test(s) &&
          !folderOf(s, rules) &&
          !SHARED_ROOT_FILES.includes(s),
      );
    expect([...new Set(unlisted)]).toEqual([]);
  });

  it('hold for every import of the code', () => {
    const broken: string[] = [];
    for (const module of result.modules) {
      const from = folderOf(module.source, rules);
      if (!from) continue;
      const rule = rules.get(from)!;
      for (const dependency of module.dependencies) {
        const target = dependency.resolved;
        if (dependency.coreModule || target.startsWith('node_modules') || dependency.couldNotResolve) continue;
        if (rule.everything || folderOf(target, rules) === from || SHARED_ROOT_FILES.includes(target)) continue;
        if (matches(target, rule.allowed)) continue;
        const typeOnly = dependency.dependencyTypes.includes('type-only');
        if (typeOnly && matches(target, rule.typesOnly)) continue;
        broken.push(`${module.source} -> ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('catch an import the table does not allow', () => {
    const rule = rules.get('writer/')!;
    expect(matches('local/store/paths.ts', rule.allowed)).toBe(false);
    expect(matches('shared/query/sql/sql.ts', rule.allowed)).toBe(true);
  });
});
