import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { build } from 'esbuild';
import type { ExtraRoutes } from './http-server.js';
import type { LocalPaths } from '../store/paths.js';

// The dashboard at `/` (dashboard/): built by esbuild from its sources on the first request (about a tenth of a
// second) and kept in memory, so `npm start` needs no build step and serves the page with the API, no second server.
// `npm run dashboard:build` writes the same files for a static host (docs/DEPLOY.md, "Hosting the dashboard").
// `dashboard/config.json` offers the demo key `npm start` created on first start, when there is one.

const sourceDir = fileURLToPath(new URL('../../dashboard/', import.meta.url));

export interface DashboardFiles {
  'index.html': string;
  'dashboard/app.js': string;
  'dashboard/app.css': string;
}

/** Bundles the dashboard: minified ESM and one style sheet. */
export async function buildDashboard(): Promise<DashboardFiles> {
  const result = await build({
    entryPoints: { app: join(sourceDir, 'main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    write: false,
    outdir: 'out',
    legalComments: 'none',
    logLevel: 'silent',
  });
  const file = (ext: string) => new TextDecoder().decode(result.outputFiles.find((f) => f.path.endsWith(ext))!.contents);
  return { 'index.html': await readFile(join(sourceDir, 'index.html'), 'utf8'), 'dashboard/app.js': file('.js'), 'dashboard/app.css': file('.css') };
}

/** Where `npm start` keeps the demo key it created, for the dashboard to offer (local only, mode 0600). */
export function demoKeyFile(paths: LocalPaths): string {
  return join(paths.dataDir, 'demo-key.json');
}

export function dashboardRoutes(paths: LocalPaths): ExtraRoutes {
  let files: Promise<DashboardFiles> | undefined;
  const serve = (name: keyof DashboardFiles, type: string) => async () => {
    files ??= buildDashboard();
    return text(200, (await files)[name], type);
  };
  return {
    'GET /': serve('index.html', 'text/html; charset=utf-8'),
    'GET /dashboard/app.js': serve('dashboard/app.js', 'text/javascript; charset=utf-8'),
    'GET /dashboard/app.css': serve('dashboard/app.css', 'text/css; charset=utf-8'),
    'GET /dashboard/config.json': async () => {
      const file = demoKeyFile(paths);
      const config = existsSync(file) ? (JSON.parse(await readFile(file, 'utf8')) as { domain: string; token: string }) : undefined;
      return text(200, JSON.stringify(config ? { demoKey: config.token, domain: config.domain } : {}), 'application/json');
    },
  };
}

function text(status: number, body: string, type: string): APIGatewayProxyStructuredResultV2 {
  return { statusCode: status, headers: { 'content-type': type, 'cache-control': 'no-store' }, body };
}
