import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRouteSpecs } from '../../shared/http/openapi.js';
import { responseSchemas } from '../../shared/http/response-schemas.js';
import { routes, type KeyedRouteKey, type RouteKey } from '../../shared/routes.js';
import { openApiJson } from '../../local/server/openapi-document.js';
import { openApiTypes } from '../../local/server/openapi-types.js';
import { SHOP_RANGE, shopEvents } from '../fixtures/shop-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// The OpenAPI document is generated from the schemas the handlers enforce; these tests keep the committed copy
// fresh and prove that real answers match the documented response shapes.

const projectRoot = new URL('../..', import.meta.url).pathname;

let api: TestApi;
let token: string;
beforeAll(async () => {
  api = await startTestApi();
  await api.importEvents(shopEvents);
  token = (await api.createKey({ domains: ['shop.test'] })).token;
});
afterAll(() => api?.close());

describe('the OpenAPI document', () => {
  it('docs/openapi.json and the client types are what `npm run openapi` generates now', async () => {
    const json = await openApiJson();
    expect(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')).toBe(json);
    expect(readFileSync(new URL('../../dashboard/api-types.ts', import.meta.url), 'utf8')).toBe(
      await openApiTypes(json),
    );
  });

  it("passes Redocly's recommended rules with no error and no warning", () => {
    const run = spawnSync(
      join(projectRoot, 'node_modules', '.bin', 'redocly'),
      ['lint', 'docs/openapi.json', '--format=json'],
      { cwd: projectRoot, encoding: 'utf8' },
    );
    const report = JSON.parse(run.stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string }[];
    };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('gives each JSON body an example that the handler accepts, which "Try it out" starts from', async () => {
    const specs = await loadRouteSpecs((module) => import(`../../functions/${module}.ts`));
    const doc = JSON.parse(await openApiJson());
    for (const [key, route] of Object.entries(routes) as [RouteKey, (typeof routes)[RouteKey]][]) {
      const body = specs[key].body;
      if (!body) continue;
      const documented =
        doc.paths[route.path][route.method.toLowerCase()].requestBody.content['application/json'].schema;
      const schema = documented.$ref ? doc.components.schemas[documented.$ref.split('/').pop()] : documented;
      expect(schema.example, route.name).toBeDefined();
      expect(body.safeParse(schema.example).error?.issues ?? [], route.name).toEqual([]);
    }
  });

  it('names the shapes clients use as components, and the timeline items as a union on `type`', async () => {
    const doc = JSON.parse(await openApiJson());
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'Error',
        'QueryRow',
        'Visitor',
        'VisitorStats',
        'TimelineItem',
        'Annotation',
        'Pagination',
      ]),
    );
    expect(doc.components.schemas.TimelineItem.discriminator.propertyName).toBe('type');
    expect(Object.keys(doc.components.schemas.TimelineItem.discriminator.mapping).sort()).toEqual([
      'auto',
      'event',
      'pageview',
      'revenue',
    ]);
  });

  it('lists per operation the statuses it can answer, each with the error body and its headers', async () => {
    const doc = JSON.parse(await openApiJson());
    for (const route of Object.values(routes)) {
      // The public collector: no key, so no 401 and no rate-limit headers; its preflight is no client operation.
      if (route.scope === null) continue;
      const responses = doc.paths[route.path][route.method.toLowerCase()].responses;
      const expected = ['400', '401', '403', '429', '500'];
      if (route.method === 'POST') expected.push('413');
      if ((route.uses as readonly string[]).includes('analytics')) expected.push('503', '504');
      expect(Object.keys(responses), route.name).toEqual(expect.arrayContaining(expected));
      for (const status of expected) {
        expect(responses[status].content['application/json'].schema.$ref, `${route.name} ${status}`).toBe(
          '#/components/schemas/Error',
        );
        expect(responses[status].headers['X-Request-Id'].required).toBe(true);
      }
      expect(responses['401'].headers['WWW-Authenticate'].required).toBe(true);
      expect(responses['429'].headers['Retry-After'].required).toBe(true);
    }
  });

  it('is rendered at GET /docs by Swagger UI, served from this server (offline), which loads /openapi.json', async () => {
    const page = await api.request('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const scripts = [...String(page.body).matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts).toEqual([
      '/docs/swagger-ui.css',
      '/docs/reference-fixes.css',
      '/docs/swagger-ui-bundle.js',
      '/docs/reference-fixes.js',
    ]);
    expect(String(page.body)).toContain("url: '/openapi.json'");
    const bundle = await api.request('GET', '/docs/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(String(bundle.body)).toContain('SwaggerUIBundle');
    const css = await api.request('GET', '/docs/swagger-ui.css');
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    // The project's accessibility fixes, from beside the server's code.
    const fixes = await api.request('GET', '/docs/reference-fixes.css');
    expect(fixes.status).toBe(200);
    expect(String(fixes.body)).toContain('.swagger-ui .opblock');
    expect((await api.request('GET', '/docs/reference-fixes.js')).headers.get('content-type')).toMatch(
      /^text\/javascript/,
    );
  });

  it('is served at GET /openapi.json and names every route of the route table', async () => {
    const res = await api.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    for (const route of Object.values(routes)) {
      if (route === routes.collectEventPreflight) continue;
      expect(res.body.paths[route.path][route.method.toLowerCase()].operationId).toBe(route.name);
    }
  });

  it('describes the collector as public, taking JSON or text/plain, answering 202 without a body', async () => {
    const doc = JSON.parse(await openApiJson());
    const operation = doc.paths['/api/event'].post;
    expect(operation.security).toEqual([]);
    expect(Object.keys(operation.requestBody.content).sort()).toEqual(['application/json', 'text/plain']);
    expect(Object.keys(operation.responses).sort()).toEqual(['202', '400', '403', '413', '429', '500']);
    expect(operation.responses['202'].content).toBeUndefined();
    expect(doc.paths['/api/event'].options).toBeUndefined();
  });
});

describe('real responses match the documented schemas', () => {
  const range = { date_range: SHOP_RANGE };
  const calls: [KeyedRouteKey, string, string, { body?: unknown; query?: Record<string, string> }][] = [
    [
      'query',
      'POST',
      '/v1/query',
      { body: { ...range, metrics: ['visitors', 'revenue'], dimensions: ['page'], include_revenue: true } },
    ],
    ['eventsList', 'GET', '/v1/events', { query: { start: SHOP_RANGE[0], end: SHOP_RANGE[1] } }],
    ['eventProperties', 'GET', '/v1/events/signup/properties', { query: { start: SHOP_RANGE[0], end: SHOP_RANGE[1] } }],
    [
      'eventPropertyValues',
      'GET',
      '/v1/events/signup/properties/plan',
      { query: { start: SHOP_RANGE[0], end: SHOP_RANGE[1], include_revenue: 'true' } },
    ],
    ['journeysList', 'POST', '/v1/journeys/list', { body: { domain: 'shop.test', ...range } }],
    [
      'journeysTimeline',
      'POST',
      '/v1/journeys/timeline',
      { body: { domain: 'shop.test', visitor_id: 'v1', ...range, include_auto_events: true } },
    ],
    ['journeysStats', 'POST', '/v1/journeys/stats', { body: { domain: 'shop.test', visitor_id: 'v1' } }],
    ['journeysActivity', 'POST', '/v1/journeys/activity', { body: { domain: 'shop.test', visitor_id: 'v1' } }],
    [
      'annotationsCreate',
      'POST',
      '/v1/annotations',
      { body: { domain: 'shop.test', date: '2026-03-01', title: 'Launch' } },
    ],
    ['annotationsList', 'GET', '/v1/annotations', { query: { domain: 'shop.test' } }],
    ['goalsCreate', 'POST', '/v1/goals', { body: { domain: 'shop.test', page_path: '/pricing' } }],
    ['goalsList', 'GET', '/v1/goals', { query: { domain: 'shop.test' } }],
    ['sharedLinksCreate', 'POST', '/v1/shared-links', { body: { domain: 'shop.test', name: 'Board' } }],
    ['sharedLinksList', 'GET', '/v1/shared-links', { query: { domain: 'shop.test' } }],
  ];

  it.each(calls)('%s', async (key, method, path, options) => {
    const res = await api.request(method, path, { token, ...options });
    expect(res.status).toBe(key.endsWith('Create') ? 201 : 200);
    const parsed = responseSchemas[key].safeParse(res.body);
    expect(parsed.error?.issues ?? []).toEqual([]);
  });

  it('sharedLinksDelete', async () => {
    const made = await api.request('POST', '/v1/shared-links', { token, body: { domain: 'shop.test', name: 'x' } });
    const res = await api.request('DELETE', `/v1/shared-links/${made.body.id}`, {
      token,
      query: { domain: 'shop.test' },
    });
    expect(responseSchemas.sharedLinksDelete.safeParse(res.body).success).toBe(true);
  });

  it('goalsDelete', async () => {
    const created = await api.request('POST', '/v1/goals', { token, body: { domain: 'shop.test', event_name: 'x' } });
    const res = await api.request('DELETE', `/v1/goals/${created.body.id}`, { token, query: { domain: 'shop.test' } });
    expect(responseSchemas.goalsDelete.safeParse(res.body).success).toBe(true);
  });

  it('annotationsDelete', async () => {
    const created = await api.request('POST', '/v1/annotations', {
      token,
      body: { domain: 'shop.test', date: '2026-03-02', title: 'x' },
    });
    const res = await api.request('DELETE', `/v1/annotations/${created.body.id}`, {
      token,
      query: { domain: 'shop.test' },
    });
    expect(responseSchemas.annotationsDelete.safeParse(res.body).success).toBe(true);
  });
});
