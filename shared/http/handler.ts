import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { z } from 'zod';
import { authenticate, requireScope } from '../auth/authenticate.js';
import { resolveDomain } from '../auth/domain-access.js';
import { enterRequest } from '../limits/concurrency.js';
import { admitDomainRequest, admitRequest } from '../limits/limiter.js';
import type { QueryEngine } from '../engines/engine.js';
import { logger, withRequestLogger } from '../log.js';
import type { Route } from '../routes.js';
import type { Credential } from '../store/credentials-repo.js';
import { ApiError, ValidationError, internalError } from '../errors.js';
import { jsonResponse, type HttpResult } from './response.js';
import { apiErrorOfEngine } from './engine-errors.js';
import { parseInput } from './validation.js';

export interface RequestInput<B, Q, P> {
  body: B;
  query: Q;
  path: P;
  credential: Credential;
  log: Logger;
  /**
   * The domain this request may act on (403/400 by the credential rules), charged to its monthly usage: `calls` API
   * calls (a batch's queries), one by default.
   */
  authorizeDomain(requested: string | undefined, calls?: number): Promise<string>;
}

export interface HandlerSpec<B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType> {
  body?: B;
  query?: Q;
  path?: P;
  /**
   * The engine a route that reads analytics runs on (required for those routes): whether it bills a statement it
   * starts decides whether the work may start before the limits admit the request (workBeforeAdmission).
   */
  engine?: () => QueryEngine;
}

/** What the middlewares learn about a request, in the order they learn it; the handler reads it from its context. */
interface RequestState {
  requestId: string;
  log: Logger;
  startedAt: number;
  credential?: Credential;
  /** The rate-limit update, started at authentication and awaited with the usage update (one round trip). */
  admission?: Promise<Record<string, string>>;
  /**
   * The rate and usage verdict on the domain (authorizeDomain), when the request's work runs while it is pending
   * (workBeforeAdmission): awaited before any answer.
   */
  domainAdmission?: Promise<void>;
  /** Headers every response to this request carries (request id, rate limit). */
  headers: Record<string, string>;
  /** Counts the request out of its key's requests in flight (shared/limits/concurrency.ts). */
  release?: () => void;
}

type Event = APIGatewayProxyEventV2;
type Result = APIGatewayProxyStructuredResultV2;
/** The Lambda context with the request's state, set by the first middleware; absent only if that one failed. */
type StateContext = Context & { state?: RequestState };
type Request = middy.Request<Event, Result, unknown, StateContext>;
type Middleware = middy.MiddlewareObj<Event, Result, unknown, StateContext>;

/**
 * Wraps an endpoint in the middleware every route shares, in this order: request id and logging, error
 * shaping, authentication and scope, rate limit, JSON body parsing; then the handler validates its input
 * and does its work. Errors become `{"error","message"}` responses; only ApiErrors say what went wrong.
 */
export function httpHandler<
  B extends z.ZodType = z.ZodUnknown,
  Q extends z.ZodType = z.ZodUnknown,
  P extends z.ZodType = z.ZodUnknown,
>(
  route: Route,
  spec: HandlerSpec<B, Q, P>,
  run: (input: RequestInput<z.output<B>, z.output<Q>, z.output<P>>) => Promise<HttpResult>,
) {
  const base = async (event: Event, context: StateContext): Promise<Result> => {
    const state = context.state!;
    const credential = state.credential!;
    const input: RequestInput<z.output<B>, z.output<Q>, z.output<P>> = {
      body: (spec.body ? parseInput(spec.body, event.body, 'body') : undefined) as z.output<B>,
      query: (spec.query
        ? parseInput(spec.query, event.queryStringParameters ?? {}, 'query')
        : undefined) as z.output<Q>,
      path: (spec.path ? parseInput(spec.path, event.pathParameters ?? {}, 'path') : undefined) as z.output<P>,
      credential,
      log: state.log,
      async authorizeDomain(requested, calls = 1) {
        const domain = resolveDomain(credential, requested);
        // A batch's work is many requests' work: it waits for the limits' verdict on any engine.
        const early = workBeforeAdmission(route, spec) && calls === 1;
        const admitted = admitDomainRequest(state.admission!, credential, domain, new Date(), calls);
        if (!early) await admitted;
        else {
          admitted.catch(() => undefined); // awaited after the work, or by onError
          state.domainAdmission = admitted;
        }
        return domain;
      },
    };
    // The request's engine calls share one deadline, early enough to answer 504 before Lambda ends the invocation.
    const deadline =
      typeof context.getRemainingTimeInMillis === 'function'
        ? Date.now() + context.getRemainingTimeInMillis() - RESPONSE_MARGIN_MS
        : undefined;
    const result = await withRequestLogger(state.log, () => run(input), deadline);
    // A request the limits refuse is answered 429 or 403 even when its work is done: the work is dropped.
    await state.domainAdmission;
    Object.assign(state.headers, await state.admission);
    return jsonResponse(result.status ?? 200, result.body, { ...state.headers, ...result.headers });
  };

  if (route.uses.includes('analytics') && !spec.engine)
    throw new Error(`route ${route.name} reads analytics: give its handler the engine`);
  const chain = middy<Event, Result, unknown, StateContext>(base).use(envelope(route)).use(authentication(route));
  // Any content type is read as JSON (curl -d sends form encoding); the parser's own errors become 400s (toApiError).
  if (spec.body) chain.use(bodyPresent()).use(httpJsonBodyParser(anyContentType));
  // The route and its schemas ride along for the OpenAPI document, so it is built from what handlers enforce.
  return Object.assign(chain, { route, spec: spec as HandlerSpec<z.ZodType, z.ZodType, z.ZodType> });
}

/** Request id, per-request logger and the mapping of every error to a response. Registered first, so its
 *  onError runs last and sees whatever any other step threw. */
function envelope(route: Route): Middleware {
  return {
    before: (request) => {
      const requestId = request.event.requestContext?.requestId ?? request.context.awsRequestId;
      const log = logger.createChild({ persistentKeys: { request_id: requestId, route: route.name } });
      request.context.state = { requestId, log, startedAt: performance.now(), headers: { 'x-request-id': requestId } };
    },
    after: (request) => {
      request.context.state?.release?.();
      logRequest(request, request.response?.statusCode ?? 200);
    },
    onError: async (request) => {
      const state = request.context.state;
      state?.release?.();
      let thrown: unknown = request.error;
      // A request over the rate limit is answered 429 whatever else was wrong with it, and one over the usage limit
      // 403 whatever went wrong in the work that ran while the limits were read.
      if (state?.admission) {
        try {
          Object.assign(state.headers, await state.admission);
          await state.domainAdmission;
        } catch (refusal) {
          thrown = refusal;
        }
      }
      const error = toApiError(thrown, state?.log ?? logger);
      request.response = jsonResponse(error.status, error.toBody(), { ...state?.headers, ...error.headers });
      logRequest(request, error.status);
    },
  };
}

/**
 * Whether a request's work may run while its rate and usage updates are in flight, sparing their round trip: only
 * for reads (a refused write must change nothing) on an engine whose started statements cost nothing but local work
 * (not Athena, which bills each statement it starts); other routes (annotations: DynamoDB) wait. A refused request's
 * work is then done and dropped; the per-key limit on requests running at once (shared/limits/concurrency.ts)
 * bounds that work.
 */
function workBeforeAdmission(route: Route, spec: HandlerSpec<z.ZodType, z.ZodType, z.ZodType>): boolean {
  return route.scope === 'analytics:read' && spec.engine !== undefined && !spec.engine().billedPerStatement;
}

function logRequest(request: Request, status: number): void {
  const state = request.context.state;
  (state?.log ?? logger).info('request', {
    method: request.event.requestContext?.http?.method,
    path: request.event.rawPath,
    status,
    duration_ms: state === undefined ? undefined : Math.round(performance.now() - state.startedAt),
  });
}

function authentication(route: Route): Middleware {
  return {
    before: async (request) => {
      const state = request.context.state!;
      const credential = await authenticate(request.event.headers?.authorization);
      state.credential = credential;
      state.log.appendKeys({ key_id: credential.keyId });
      state.admission = admitRequest(credential);
      state.admission.catch(() => undefined); // awaited later; never an unhandled rejection
      if (route.scope) requireScope(credential, route.scope);
      state.release = await enterRequest(credential.keyId);
    },
  };
}

/** Time kept back from the Lambda's remaining time to shape and send a 504. */
export const RESPONSE_MARGIN_MS = 1_500;

/** Request bodies are small JSON documents; API Gateway itself would let up to 10 MB through. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The parser's option to skip its content-type check, which its code reads but the typings of 6.4 leave out. */
const anyContentType = { disableContentTypeCheck: true } as Parameters<typeof httpJsonBodyParser>[0];

/** A body within MAX_BODY_BYTES (413 otherwise) and not empty (400), before the JSON parser reads it. */
function bodyPresent(): Middleware {
  return {
    before: (request) => {
      if (Buffer.byteLength(request.event.body ?? '') > MAX_BODY_BYTES) {
        throw new ApiError(413, 'payload_too_large', 'The request body may be at most 1 MiB');
      }
      if (request.event.body === undefined || request.event.body === '') {
        throw new ValidationError('body: must be a JSON object', [{ path: 'body', message: 'must be a JSON object' }]);
      }
    },
  };
}

/** Whether `error` is the JSON body parser's: it throws a 415 for malformed JSON, which this API answers as a 400. */
function isBodyParserError(error: unknown): boolean {
  const cause = (error as { cause?: { package?: unknown } } | null)?.cause;
  return cause?.package === '@middy/http-json-body-parser';
}

function toApiError(error: unknown, log: Logger): ApiError {
  if (error instanceof ApiError) return error;
  const fromEngine = apiErrorOfEngine(error);
  if (fromEngine) return fromEngine;
  if (isBodyParserError(error))
    return new ValidationError('body: is not valid JSON', [{ path: 'body', message: 'is not valid JSON' }]);
  log.error('unhandled error', error as Error);
  return internalError();
}
