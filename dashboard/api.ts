import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './api-types';

// The dashboard talks to the public API only, through a client generated from its OpenAPI document
// (api-types.ts, `npm run openapi`), with the key the person pasted. Every error answer becomes an ApiError
// carrying the API's own message.

export type Api = Client<paths>;
export type QueryRow = components['schemas']['QueryRow'];
export type Dimension = components['schemas']['Dimension'];
export type QueryBody = NonNullable<paths['/v1/query']['post']['requestBody']>['content']['application/json'];
export type Filter = NonNullable<QueryBody['filters']>[number];
export type Visitor = components['schemas']['Visitor'];
export type TimelineItem = components['schemas']['TimelineItem'];
export type Annotation = components['schemas']['Annotation'];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function apiClient(baseUrl: string, key: string): Api {
  const client = createClient<paths>({ baseUrl });
  client.use({
    onRequest: ({ request }) => {
      request.headers.set('Authorization', `Bearer ${key}`);
      return request;
    },
  });
  return client;
}

/** The data of an openapi-fetch result, or an ApiError with the API's error body. */
export async function answer<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (data !== undefined && response.ok) return data;
  const body = (error ?? {}) as { error?: string; message?: string };
  const wait = response.headers.get('Retry-After');
  throw new ApiError(
    response.status,
    body.error ?? 'error',
    `${body.message ?? response.statusText}${wait ? ` (retry in ${wait} s)` : ''}`,
  );
}
