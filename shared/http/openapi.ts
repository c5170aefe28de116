import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import type * as z from 'zod';
import { routes, type Route, type RouteKey } from '../routes.js';
import type { HandlerSpec } from './handler.js';
import { errorSchema, responseSchemas } from './response-schemas.js';

// The OpenAPI 3.1 document, generated from the zod schemas the handlers validate with and the response
// schemas the tests check real answers against.

export type RouteSpecs = Record<RouteKey, HandlerSpec<z.ZodType, z.ZodType, z.ZodType>>;

/** Per route: its one-line summary and its tag; a new route does not compile until it is described here. */
const described: Record<RouteKey, { summary: string; tag: Tag }> = {
  query: { summary: 'Metrics by up to two dimensions, filtered, sorted and paged', tag: 'Query' },
  queryBatch: {
    summary: 'Up to 20 queries of one domain in one request, merged into Athena statements (extension)',
    tag: 'Query',
  },
  journeysList: { summary: 'Visitors of a range, filtered and bounded, with their totals', tag: 'Journeys' },
  journeysTimeline: { summary: "One visitor's rows in a range, most recent first", tag: 'Journeys' },
  journeysStats: { summary: 'One visitor over all time: first and last seen, totals, attribution', tag: 'Journeys' },
  journeysActivity: { summary: "One visitor's pageviews by weekday and hour (UTC)", tag: 'Journeys' },
  annotationsList: { summary: 'Chart annotations of a domain, optionally in a date range', tag: 'Annotations' },
  annotationsCreate: { summary: 'Add a chart annotation', tag: 'Annotations' },
  annotationsDelete: { summary: 'Delete a chart annotation', tag: 'Annotations' },
  goalsList: { summary: "A domain's goals (extension)", tag: 'Goals' },
  goalsCreate: { summary: 'Add a goal: a custom event or a page (extension)', tag: 'Goals' },
  goalsDelete: { summary: 'Delete a goal (extension)', tag: 'Goals' },
  sharedLinksList: { summary: "A domain's shared links, without their keys (extension)", tag: 'Shared links' },
  sharedLinksCreate: { summary: 'Make a read-only key for a shared link (extension)', tag: 'Shared links' },
  sharedLinksDelete: { summary: "Revoke a shared link's key (extension)", tag: 'Shared links' },
  collectEventPreflight: { summary: 'CORS preflight of POST /api/event', tag: 'Collecting' },
  collectEvent: {
    summary: "Record a pageview or a custom event from a site's visitor: Plausible's Events API, no key (extension)",
    tag: 'Collecting',
  },
  eventsList: { summary: 'Custom events of a period with their counts', tag: 'Custom events' },
  eventProperties: { summary: 'Property keys seen on a custom event', tag: 'Custom events' },
  eventPropertyValues: {
    summary: 'Values of one property of a custom event, with counts (and revenue)',
    tag: 'Custom events',
  },
};

type Tag = 'Query' | 'Journeys' | 'Annotations' | 'Goals' | 'Shared links' | 'Custom events' | 'Collecting';
const tags: { name: Tag; description: string }[] = [
  {
    name: 'Query',
    description: 'The general query: metrics × up to two dimensions, filters, sort, pages, revenue in cents.',
  },
  { name: 'Journeys', description: "Visitors and their paths: the list, one visitor's timeline, stats and activity." },
  { name: 'Annotations', description: 'Notes on a date, shown on charts.' },
  {
    name: 'Goals',
    description:
      'Extension: custom events and pages a site counts as conversions, stored beside its annotations; the dashboard reads their visitors through the query endpoint.',
  },
  {
    name: 'Shared links',
    description:
      'Extension: read-only keys made for links to a dashboard view, listed and revoked by the keys that may write.',
  },
  { name: 'Custom events', description: 'Rows of type `event`: names, property keys and values.' },
  {
    name: 'Collecting',
    description:
      "Extension: the write side sites call, without a key: Plausible's event body, so Plausible's script and this service's own (`/js/script.js`) both send to it.",
  },
];

type Headers = Record<string, { description: string; required?: boolean; schema: { type: 'string' | 'integer' } }>;
const header = (description: string, type: 'string' | 'integer' = 'string', required = false) => ({
  description,
  required,
  schema: { type },
});
const requestId: Headers = {
  'X-Request-Id': header('Identifies the request in the logs; quote it when reporting a problem', 'string', true),
};
/** Sent on every answer to a request whose key was accepted (so not on a 401). */
const rateLimit: Headers = {
  'X-RateLimit-Limit': header('Requests allowed per key and minute', 'integer'),
  'X-RateLimit-Remaining': header('Requests left in the current minute', 'integer'),
  'X-RateLimit-Reset': header('When the current minute ends, in epoch seconds', 'integer'),
};
const retryAfter: Headers = { 'Retry-After': header('Seconds to wait before retrying', 'integer', true) };

/** The error answers a route can give, with what each means for it. */
function errorResponses(key: RouteKey, route: Route): Record<string, ResponseConfig> {
  const analytics = route.uses.includes('analytics');
  const visitor = key === 'journeysTimeline' || key === 'journeysStats' || key === 'journeysActivity';
  const statuses: [string, string, Headers][] = [
    ['400', 'Invalid request: `details` names each bad field (`invalid_request`)', rateLimit],
    [
      '401',
      'Missing, unknown or revoked API key (`unauthorized`)',
      { 'WWW-Authenticate': header('`Bearer`', 'string', true) },
    ],
    [
      '403',
      'The key may not read this domain, lacks the scope, or the domain used its monthly event limit (`forbidden`, `usage_limit_exceeded`)',
      rateLimit,
    ],
    ...(visitor
      ? [['404', 'No row of this visitor in the domain (`not_found`)', rateLimit] as [string, string, Headers]]
      : []),
    ...(key === 'annotationsDelete'
      ? [['404', 'No annotation with this id in the domain (`not_found`)', rateLimit] as [string, string, Headers]]
      : []),
    ...(key === 'goalsDelete'
      ? [['404', 'No goal with this id in the domain (`not_found`)', rateLimit] as [string, string, Headers]]
      : []),
    ...(key === 'sharedLinksDelete'
      ? [['404', 'No shared link with this id in the domain (`not_found`)', rateLimit] as [string, string, Headers]]
      : []),
    ...(key === 'sharedLinksCreate'
      ? [['409', 'The domain already has 50 shared links (`conflict`)', rateLimit] as [string, string, Headers]]
      : []),
    ...(key === 'goalsCreate'
      ? [['409', 'The domain already has this goal, or 100 goals (`conflict`)', rateLimit] as [string, string, Headers]]
      : []),
    ...(route.method === 'POST'
      ? [['413', 'The body is over 1 MiB (`payload_too_large`)', rateLimit] as [string, string, Headers]]
      : []),
    [
      '429',
      'Over 100 requests this minute, or too many of this key under way at once (`rate_limited`)',
      { ...rateLimit, ...retryAfter },
    ],
    ['500', 'A fault of the service (`internal_error`); nothing about the request or the SQL is disclosed', {}],
    ...(analytics
      ? [
          [
            '503',
            'The query engine is busy or throttled, or the query needed more memory than the engine gives one query (the message says which); retry after Retry-After (`service_unavailable`)',
            { ...rateLimit, ...retryAfter },
          ] as [string, string, Headers],
          ['504', 'The query ran out of time; narrow the range or filters (`query_timeout`)', rateLimit] as [
            string,
            string,
            Headers,
          ],
        ]
      : []),
  ];
  return Object.fromEntries(
    statuses.map(([status, description, headers]) => [
      status,
      { description, headers: { ...requestId, ...headers }, content: { 'application/json': { schema: errorSchema } } },
    ]),
  );
}

/** The public collector: no key, Plausible's body as JSON or text/plain, 202 without a body. */
function registerCollector(registry: OpenAPIRegistry, route: Route, spec: RouteSpecs[RouteKey]): void {
  const error = (description: string, headers: Headers = {}) => ({
    description,
    headers: { ...requestId, ...headers },
    content: { 'application/json': { schema: errorSchema } },
  });
  registry.registerPath({
    method: 'post',
    path: route.path,
    operationId: route.name,
    summary: described.collectEvent.summary,
    tags: [described.collectEvent.tag],
    security: [],
    description:
      "No key: sites call it from their visitors' browsers. Answers carry `Access-Control-Allow-Origin: *`. The visitor " +
      "is counted by the User-Agent header and the address (the first of X-Forwarded-For, else the connection's).",
    request: {
      body: {
        content: { 'application/json': { schema: spec.body! }, 'text/plain': { schema: spec.body! } },
        required: true,
      },
    },
    responses: {
      '202': {
        description: 'Accepted: recorded, or dropped without a word (a bot, an `engagement` event)',
        headers: requestId,
      },
      '400': error('Not an event: `details` names the field and what it accepts (`invalid_request`)'),
      '403': error('A named domain is not served by this deployment (`domain_not_served`)'),
      '413': error('The body is over 128 KiB (`payload_too_large`)'),
      '429': error(
        'Over the events one client (an IPv4 address or an IPv6 /64) may send this minute (`rate_limited`)',
        retryAfter,
      ),
      '500': error('A fault of the service (`internal_error`)'),
    },
  });
}

export function buildOpenApiDocument(specs: RouteSpecs): object {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      'An API key (`aqk_...`). Each operation lists the scope its key needs. A project key reads its own domain, so `domain` ' +
      'may be left out; a personal token may read several domains and must name `domain` in every request.',
  });

  for (const [key, route] of Object.entries(routes) as [RouteKey, (typeof routes)[RouteKey]][]) {
    const spec = specs[key];
    if (key === 'collectEvent') {
      registerCollector(registry, route, spec);
      continue;
    }
    // A CORS preflight is the browser's, not a client's operation: the collector's description says it is answered.
    if (key === 'collectEventPreflight') continue;
    registry.registerPath({
      method: route.method.toLowerCase() as 'get' | 'post' | 'delete',
      path: route.path,
      operationId: route.name,
      summary: described[key].summary,
      tags: [described[key].tag],
      // OpenAPI 3.1 lets a bearer requirement list roles: here, the scope the key needs.
      security: [{ bearerAuth: route.scope ? [route.scope] : [] }],
      description: `Needs a key with scope \`${route.scope}\`. With a personal token, \`domain\` is required.`,
      request: {
        ...(spec.body ? { body: { content: { 'application/json': { schema: spec.body } }, required: true } } : {}),
        ...(spec.query ? { query: spec.query as z.ZodObject } : {}),
        ...(spec.path ? { params: spec.path as z.ZodObject } : {}),
      },
      responses: {
        [route.method === 'POST' && route.name.endsWith('Create') ? '201' : '200']: {
          description: 'Success',
          headers: { ...requestId, ...rateLimit },
          content: { 'application/json': { schema: responseSchemas[key] } },
        },
        ...errorResponses(key, route),
      },
    });
  }

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Analytics Query API',
      version: '1.0.0',
      description:
        "Read and query API over a website's tracked events. Every answer is JSON; every error is `{error, message}` " +
        '(with `details` on a 400). 100 requests per key and minute.',
      license: { name: 'UNLICENSED', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: 'http://127.0.0.1:3000', description: 'local (npm start)' }],
    tags,
  });
}

/** Loads every handler module named in the route table and reads the schemas it validates with. */
export async function loadRouteSpecs(
  importHandler: (module: string) => Promise<{ handler: { spec: RouteSpecs[RouteKey] } }>,
): Promise<RouteSpecs> {
  const entries = await Promise.all(
    (Object.entries(routes) as [RouteKey, (typeof routes)[RouteKey]][]).map(
      async ([key, route]) => [key, (await importHandler(route.handler)).handler.spec] as const,
    ),
  );
  return Object.fromEntries(entries) as RouteSpecs;
}
