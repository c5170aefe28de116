import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ExtraRoutes } from './http-server.js';

// The API reference at /docs: Swagger UI (swagger-ui-dist, served from node_modules, so it works offline) rendering
// GET /openapi.json, with "Try it out" calling this server. Its colours and a few missing names are fixed by
// reference/reference-fixes.css and .js to WCAG 2.2 AA; deep links are off (each would be a link inside the
// operation's button). The page asks for the key once (Authorize) and sends it
// as the bearer token; nothing is stored server-side.

/** The page's files and where each comes from: Swagger UI's package, or this project's fixes beside this file. */
const assets = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', from: 'swagger-ui' },
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', from: 'swagger-ui' },
  'reference-fixes.css': { type: 'text/css; charset=utf-8', from: 'own' },
  'reference-fixes.js': { type: 'text/javascript; charset=utf-8', from: 'own' },
} as const;

// The key typed into Authorize is kept in the page's memory only: the reference shares its origin (and so its
// storage) with the dashboard.
const bootstrap = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: false, persistAuthorization: false, tryItOutEnabled: true });`;

/** Swagger UI's files and the one inline script above (by its hash); inline styles, which Swagger UI sets. */
const POLICY =
  `default-src 'self'; script-src 'self' 'sha256-${createHash('sha256').update(bootstrap).digest('base64')}'; style-src 'self' 'unsafe-inline'; ` +
  "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Analytics Query API reference</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="stylesheet" href="/docs/reference-fixes.css">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/reference-fixes.js"></script>
  <script>${bootstrap}</script>
</body>
</html>
`;

/** GET /docs and the two files it loads. */
export function referencePageRoutes(): ExtraRoutes {
  const dirs = {
    'swagger-ui': dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json')),
    own: fileURLToPath(new URL('./reference/', import.meta.url)),
  };
  const cache = new Map<string, Promise<string>>();
  const routes: ExtraRoutes = { 'GET /docs': async () => text(200, page, 'text/html; charset=utf-8') };
  for (const [name, { type, from }] of Object.entries(assets)) {
    routes[`GET /docs/${name}`] = async () => {
      if (!cache.has(name)) cache.set(name, readFile(join(dirs[from], name), 'utf8'));
      return text(200, await cache.get(name)!, type, 'public, max-age=3600');
    };
  }
  return routes;
}

function text(status: number, body: string, type: string, cache = 'no-store'): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: status,
    headers: { 'content-type': type, 'cache-control': cache, 'content-security-policy': POLICY },
    body,
  };
}
