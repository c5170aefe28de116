import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ExtraRoutes } from './http-server.js';

// The API reference at /docs: Swagger UI (swagger-ui-dist, served from node_modules, so it works offline) rendering
// GET /openapi.json, with "Try it out" calling this server. The page asks for the key once (Authorize) and sends it
// as the bearer token; nothing is stored server-side.

const assets = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
} as const;

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Analytics Query API reference</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true, persistAuthorization: true, tryItOutEnabled: true });
  </script>
</body>
</html>
`;

/** GET /docs and the two files it loads. */
export function referencePageRoutes(): ExtraRoutes {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Promise<string>>();
  const routes: ExtraRoutes = { 'GET /docs': async () => text(200, page, 'text/html; charset=utf-8') };
  for (const [name, type] of Object.entries(assets)) {
    routes[`GET /docs/${name}`] = async () => {
      if (!cache.has(name)) cache.set(name, readFile(join(dir, name), 'utf8'));
      return text(200, await cache.get(name)!, type, 'public, max-age=3600');
    };
  }
  return routes;
}

function text(status: number, body: string, type: string, cache = 'no-store'): APIGatewayProxyStructuredResultV2 {
  return { statusCode: status, headers: { 'content-type': type, 'cache-control': cache }, body };
}
