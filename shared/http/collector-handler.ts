import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { ApiError, internalError } from '../errors.js';
import { logger } from '../log.js';
import type { Route } from '../routes.js';
import type { z } from 'zod';
import { jsonResponse } from './response.js';

// The public collector's envelope (POST /api/event): no key, a 202 with no body for every accepted event, and for
// anything else the `{"error","message"}` of every route, each answer readable by any page (CORS `*`), since the
// sites that send events live on other origins. Plausible's script sends text/plain, a simple request: no preflight.

type Event = APIGatewayProxyEventV2;
type Result = APIGatewayProxyStructuredResultV2;

/** What the collector needs of a request. */
export interface CollectorInput {
  body: string | undefined;
  headers: Record<string, string | undefined>;
  sourceIp: string;
}

const corsHeaders = { 'access-control-allow-origin': '*' };

export interface CollectorSpec {
  /** The body's schema, for the OpenAPI document (the run parses the body itself: it is JSON in any content type). */
  body: z.ZodType;
  maxBodyBytes: number;
}

export function collectorHandler(route: Route, spec: CollectorSpec, run: (input: CollectorInput) => Promise<string>) {
  const base = async (event: Event, context: Context): Promise<Result> => {
    const requestId = event.requestContext?.requestId ?? context.awsRequestId;
    const log = logger.createChild({ persistentKeys: { request_id: requestId, route: route.name } });
    const headers = { ...corsHeaders, 'x-request-id': requestId, 'cache-control': 'no-store' };
    let status = 202;
    let outcome: string;
    try {
      const body =
        event.isBase64Encoded && event.body ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
      if (body !== undefined && Buffer.byteLength(body) > spec.maxBodyBytes)
        throw new ApiError(413, 'payload_too_large', `The body may be at most ${spec.maxBodyBytes / 1024} KiB`);
      outcome = await run({ body, headers: event.headers ?? {}, sourceIp: event.requestContext?.http?.sourceIp ?? '' });
    } catch (thrown) {
      const error = thrown instanceof ApiError ? thrown : internalError();
      if (!(thrown instanceof ApiError)) log.error('unhandled error', thrown as Error);
      status = error.status;
      log.info('request', { method: 'POST', path: event.rawPath, status });
      return jsonResponse(status, error.toBody(), { ...headers, ...error.headers });
    }
    log.info('request', { method: 'POST', path: event.rawPath, status, outcome });
    return { statusCode: status, headers };
  };
  const handler = middy<Event, Result, unknown, Context>(base);
  // The route and the body's schema ride along for the OpenAPI document, as on every other route.
  return Object.assign(handler, { route, spec: { body: spec.body } });
}

/**
 * The answer to a CORS preflight of POST /api/event (a page sending JSON as application/json, or extra headers):
 * any origin, POST, the headers asked for. Plausible's script and ours send simple requests and never ask.
 */
export function collectorPreflightHandler(route: Route) {
  const handler = middy<Event, Result, unknown, Context>(async (event: Event): Promise<Result> => {
    const asked = event.headers?.['access-control-request-headers'] ?? '';
    return {
      statusCode: 204,
      headers: {
        ...corsHeaders,
        'access-control-allow-methods': 'POST',
        // The names a browser asks for, when they are header names: echoed, at most 1,000 characters of them.
        ...(/^[\w\-, ]{1,1000}$/.test(asked) ? { 'access-control-allow-headers': asked } : {}),
        'access-control-max-age': '86400',
      },
    };
  });
  return Object.assign(handler, { route, spec: {} });
}
