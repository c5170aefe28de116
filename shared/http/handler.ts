import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { z } from 'zod';
import { authenticate, requireScope } from '../auth/authenticate.js';
import { resolveDomain } from '../auth/domain-access.js';
import { admitDomainRequest, admitRequest } from '../limits/limiter.js';
import { logger, withRequestLogger } from '../log.js';
import type { Route } from '../routes.js';
import type { Credential } from '../store/credentials-repo.js';
import { ApiError, ValidationError, internalError } from '../errors.js';
import { jsonResponse, type HttpResult } from './response.js';
import { parseInput } from './validation.js';

export interface RequestInput<B, Q, P> {
  body: B;
  query: Q;
  path: P;
  credential: Credential;
  log: Logger;
  /** The domain this request may act on (403/400 by the credential rules), charged to its monthly usage. */
  authorizeDomain(requested: string | undefined): Promise<string>;
}

export interface HandlerSpec<B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType> {
  body?: B;
  query?: Q;
  path?: P;
}

interface Internal extends Record<string, unknown> {
  requestId: string;
  log: Logger;
  credential?: Credential;
  /** The rate-limit update, started at authentication and awaited with the usage update (one round trip). */
  admission?: Promise<Record<string, string>>;
  headers: Record<string, string>;
}

type Event = APIGatewayProxyEventV2;
type Result = APIGatewayProxyStructuredResultV2;

/**
 * Wraps an endpoint in the middleware every route shares, in this order: request id and logging, error
 * shaping, authentication and scope, rate limit, JSON body parsing; then the handler validates its input
 * and does its work. Errors become `{"error","message"}` responses; only ApiErrors say what went wrong.
 */
export function httpHandler<B extends z.ZodType = z.ZodUnknown, Q extends z.ZodType = z.ZodUnknown, P extends z.ZodType = z.ZodUnknown>(
  route: Route,
  spec: HandlerSpec<B, Q, P>,
  run: (input: RequestInput<z.output<B>, z.output<Q>, z.output<P>>) => Promise<HttpResult>,
) {
  const base = async (event: Event, context: Context): Promise<Result> => {
    const internal = (context as Context & { internal: Internal }).internal;
    const credential = internal.credential!;
    const input: RequestInput<z.output<B>, z.output<Q>, z.output<P>> = {
      body: (spec.body ? parseInput(spec.body, event.body, 'body') : undefined) as z.output<B>,
      query: (spec.query ? parseInput(spec.query, event.queryStringParameters ?? {}, 'query') : undefined) as z.output<Q>,
      path: (spec.path ? parseInput(spec.path, event.pathParameters ?? {}, 'path') : undefined) as z.output<P>,
      credential,
      log: internal.log,
      async authorizeDomain(requested) {
        const domain = resolveDomain(credential, requested);
        await admitDomainRequest(internal.admission!, credential, domain);
        return domain;
      },
    };
    const result = await withRequestLogger(internal.log, () => run(input));
    Object.assign(internal.headers, await internal.admission);
    return jsonResponse(result.status ?? 200, result.body, { ...internal.headers, ...result.headers });
  };

  const chain = middy<Event, Result>(base).use(envelope(route)).use(authentication(route));
  if (spec.body) chain.use(jsonBody());
  // The route and its schemas ride along for the OpenAPI document, so it is built from what handlers enforce.
  return Object.assign(chain, { route, spec: spec as HandlerSpec<z.ZodType, z.ZodType, z.ZodType> });
}

/** Request id, per-request logger and the mapping of every error to a response. Registered first, so its
 *  onError runs last and sees whatever any other step threw. */
function envelope(route: Route): middy.MiddlewareObj<Event, Result> {
  return {
    before: (request) => {
      const requestId = request.event.requestContext?.requestId ?? request.context.awsRequestId;
      const log = logger.createChild({ persistentKeys: { request_id: requestId, route: route.name } });
      const internal: Internal = { requestId, log, headers: { 'x-request-id': requestId } };
      (request.context as Context & { internal: Internal }).internal = internal;
      (request.internal as Record<string, unknown>).startedAt = performance.now();
    },
    after: (request) => {
      logRequest(request, request.response?.statusCode ?? 200);
    },
    onError: async (request) => {
      const internal = (request.context as Context & { internal?: Internal }).internal;
      let thrown: unknown = request.error;
      // A request over the rate limit is answered 429 whatever else was wrong with it.
      if (internal?.admission) {
        try {
          Object.assign(internal.headers, await internal.admission);
        } catch (rateError) {
          thrown = rateError;
        }
      }
      const error = toApiError(thrown, internal?.log ?? logger);
      request.response = jsonResponse(error.status, error.toBody(), { ...internal?.headers, ...error.headers });
      logRequest(request, error.status);
    },
  };
}

function logRequest(request: middy.Request<Event, Result>, status: number): void {
  const internal = (request.context as Context & { internal?: Internal }).internal;
  const startedAt = (request.internal as Record<string, unknown>).startedAt as number | undefined;
  (internal?.log ?? logger).info('request', {
    method: request.event.requestContext?.http?.method,
    path: request.event.rawPath,
    status,
    duration_ms: startedAt === undefined ? undefined : Math.round(performance.now() - startedAt),
  });
}

function authentication(route: Route): middy.MiddlewareObj<Event, Result> {
  return {
    before: async (request) => {
      const internal = (request.context as Context & { internal: Internal }).internal;
      const credential = await authenticate(request.event.headers?.authorization);
      internal.credential = credential;
      internal.log.appendKeys({ key_id: credential.keyId });
      internal.admission = admitRequest(credential);
      internal.admission.catch(() => undefined); // awaited later; never an unhandled rejection
      if (route.scope) requireScope(credential, route.scope);
    },
  };
}

/** Request bodies are small JSON documents; API Gateway itself would let up to 10 MB through. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Any content type is read as JSON (curl -d sends form encoding); a body that is not JSON is a 400. */
function jsonBody(): middy.MiddlewareObj<Event, Result> {
  const parser = httpJsonBodyParser({ disableContentTypeCheck: true } as Parameters<typeof httpJsonBodyParser>[0]);
  return {
    before: async (request) => {
      if (Buffer.byteLength(request.event.body ?? '') > MAX_BODY_BYTES) {
        throw new ApiError(413, 'payload_too_large', 'The request body may be at most 1 MiB');
      }
      if (request.event.body === undefined || request.event.body === '') {
        throw new ValidationError('body: must be a JSON object', [{ path: 'body', message: 'must be a JSON object' }]);
      }
      try {
        await parser.before!(request as never);
      } catch {
        throw new ValidationError('body: is not valid JSON', [{ path: 'body', message: 'is not valid JSON' }]);
      }
    },
  };
}

function toApiError(error: unknown, log: Logger): ApiError {
  if (error instanceof ApiError) return error;
  log.error('unhandled error', error as Error);
  return internalError();
}
