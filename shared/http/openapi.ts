import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import { routes, type RouteKey } from '../routes.js';
import type { HandlerSpec } from './handler.js';
import { errorSchema, responseSchemas } from './response-schemas.js';

// The OpenAPI 3.1 document, generated from the zod schemas the handlers validate with and the response
// schemas the tests check real answers against.

export type RouteSpecs = Record<RouteKey, HandlerSpec<z.ZodType, z.ZodType, z.ZodType>>;

const errorStatuses: Record<string, string> = {
  '400': 'Invalid request; `details` names each bad field',
  '401': 'Missing, unknown or revoked API key',
  '403': 'No access to the domain, missing scope, or usage limit exceeded (`usage_limit_exceeded`)',
  '404': 'Not found',
  '429': 'Rate limit exceeded; see Retry-After',
};

export function buildOpenApiDocument(specs: RouteSpecs): object {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer' });
  const error = errorSchema;

  for (const [key, route] of Object.entries(routes) as [RouteKey, (typeof routes)[RouteKey]][]) {
    const spec = specs[key];
    const errors = Object.fromEntries(
      Object.entries(errorStatuses).map(([status, description]) => [status, { description, content: { 'application/json': { schema: error } } }]),
    );
    registry.registerPath({
      method: route.method.toLowerCase() as 'get' | 'post' | 'delete',
      path: route.path,
      operationId: route.name,
      security: [{ bearerAuth: [] }],
      ...(route.scope ? { description: `Needs scope ${route.scope}.` } : {}),
      request: {
        ...(spec.body ? { body: { content: { 'application/json': { schema: spec.body } }, required: true } } : {}),
        ...(spec.query ? { query: spec.query as z.ZodObject } : {}),
        ...(spec.path ? { params: spec.path as z.ZodObject } : {}),
      },
      responses: {
        [route.name === 'AnnotationsCreate' ? '201' : '200']: {
          description: 'Success',
          content: { 'application/json': { schema: responseSchemas[key] } },
        },
        ...errors,
      },
    });
  }

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Analytics Query API',
      version: '1.0.0',
      description: 'Read and query API over a website\'s tracked events. Every response to an authenticated request carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.',
    },
    servers: [{ url: 'http://127.0.0.1:3000', description: 'local (npm start)' }],
  });
}

/** Loads every handler module named in the route table and reads the schemas it validates with. */
export async function loadRouteSpecs(importHandler: (module: string) => Promise<{ handler: { spec: RouteSpecs[RouteKey] } }>): Promise<RouteSpecs> {
  const entries = await Promise.all(
    (Object.entries(routes) as [RouteKey, (typeof routes)[RouteKey]][]).map(async ([key, route]) => [key, (await importHandler(route.handler)).handler.spec] as const),
  );
  return Object.fromEntries(entries) as RouteSpecs;
}
