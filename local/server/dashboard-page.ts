import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { build } from 'esbuild';
import type { ExtraRoutes } from './http-server.js';
import type { LocalPaths } from '../store/paths.js';
import { countryShapes } from './country-shapes.js';

// The dashboard at `/` (dashboard/): built by esbuild from its sources on the first request (about a tenth of a
// second) and kept in memory, so `npm start` needs no build step and serves the page with the API, no second server.
// `npm run dashboard:build` writes the same files for a static host (docs/DEPLOY.md, "Hosting the dashboard").
// The demo key `npm start` created is offered only through the link it prints (`/#key=...&domain=...`): a fragment
// never reaches a server, and the terminal is the user's own; no other local user or web page can ask the server
// for it (docs/SECURITY.md, "Local services").

const sourceDir = fileURLToPath(new URL('../../dashboard/', import.meta.url));

export interface DashboardFiles {
  'index.html': string;
  'dashboard/app.js': string;
  'dashboard/app.css': string;
  /** The world map's country outlines (country-shapes.ts), fetched when the Countries tab is shown. */
  'dashboard/countries.json': string;
  /** The tracker script sites embed (tracker/script.ts), served beside the dashboard. */
  'js/script.js': string;
}

/** Bundles the dashboard: minified ESM, one style sheet, and the map's outlines. */
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
  const file = (ext: string) =>
    new TextDecoder().decode(result.outputFiles.find((f) => f.path.endsWith(ext))!.contents);
  return {
    'index.html': await readFile(join(sourceDir, 'index.html'), 'utf8'),
    'dashboard/app.js': file('.js'),
    'dashboard/app.css': file('.css'),
    'dashboard/countries.json': JSON.stringify(await countryShapes()),
    'js/script.js': await buildTracker(),
  };
}

const trackerSource = fileURLToPath(new URL('../../tracker/script.ts', import.meta.url));

/** The tracker script, minified for the browsers of 2017 on (sendBeacon, URL, closest). */
export async function buildTracker(): Promise<string> {
  const result = await build({
    entryPoints: [trackerSource],
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2017',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return new TextDecoder().decode(result.outputFiles[0]!.contents);
}

/** Where `npm start` keeps the demo key it created, for the link it prints at each start (mode 0600). */
export function demoKeyFile(paths: LocalPaths): string {
  return join(paths.dataDir, 'demo-key.json');
}

/** The dashboard's address, with the demo key in its fragment when `npm start` made one. */
export function dashboardLink(paths: LocalPaths, apiUrl: string): string {
  const file = demoKeyFile(paths);
  if (!existsSync(file)) return `${apiUrl}/`;
  const { domain, token } = JSON.parse(readFileSync(file, 'utf8')) as { domain: string; token: string };
  return `${apiUrl}/#${new URLSearchParams({ key: token, domain }).toString()}`;
}

export function dashboardRoutes(): ExtraRoutes {
  let files: Promise<DashboardFiles> | undefined;
  let tracker: Promise<string> | undefined;
  const serve = (name: keyof DashboardFiles, type: string) => async () => {
    files ??= buildDashboard();
    return text(200, (await files)[name], type);
  };
  return {
    'GET /': serve('index.html', 'text/html; charset=utf-8'),
    'GET /dashboard/app.js': serve('dashboard/app.js', 'text/javascript; charset=utf-8'),
    'GET /dashboard/app.css': serve('dashboard/app.css', 'text/css; charset=utf-8'),
    'GET /dashboard/countries.json': serve('dashboard/countries.json', 'application/json'),
    // Built by itself: a site's visitors load it, never the dashboard.
    'GET /js/script.js': async () => text(200, await (tracker ??= buildTracker()), 'text/javascript; charset=utf-8'),
  };
}

/**
 * The dashboard's policy: its own script and styles only (style attributes allowed: charts set widths), the API of
 * this server or any HTTPS one (a deployed stack's), no frames of it anywhere.
 */
export const DASHBOARD_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self' https:; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'";

function text(status: number, body: string, type: string): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: status,
    headers: { 'content-type': type, 'cache-control': 'no-store', 'content-security-policy': DASHBOARD_POLICY },
    body,
  };
}
