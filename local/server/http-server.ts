import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { routeList, type Route } from '../../shared/routes.js';
import { ApiError, MethodNotAllowedError, NotFoundError, ValidationError, internalError } from '../../shared/errors.js';
import { MAX_BODY_BYTES } from '../../shared/http/handler.js';
import { jsonResponse } from '../../shared/http/response.js';

// The local stand-in for API Gateway: each request becomes an HTTP API payload v2 event for the very handler
// module Lambda runs, and the handler's result is written back.

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  params: string[];
}

const compiled: CompiledRoute[] = routeList.map((route) => {
  const params: string[] = [];
  const source = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    params.push(name);
    return '([^/]+)';
  });
  return { route, pattern: new RegExp(`^${source}$`), params };
});

const handlers = new Map<string, Promise<LambdaHandler>>();

function loadHandler(route: Route): Promise<LambdaHandler> {
  let handler = handlers.get(route.handler);
  if (!handler) {
    handler = import(`../../functions/${route.handler}.ts`).then((m: { handler: LambdaHandler }) => m.handler);
    // A failed load is not remembered, so the next request tries again (e.g. after the file is fixed).
    const loading = handler;
    loading.catch(() => {
      if (handlers.get(route.handler) === loading) handlers.delete(route.handler);
    });
    handlers.set(route.handler, handler);
  }
  return handler;
}

/** Extra routes served only by the local server (e.g. the OpenAPI document). */
export type ExtraRoutes = Record<string, () => Promise<APIGatewayProxyStructuredResultV2>>;

/** How a route's handler is invoked: directly, or (in the tests) as the deployed function it is, with its role. */
export type RouteInvoker = <T>(route: Route, invoke: () => Promise<T>) => Promise<T>;
const direct: RouteInvoker = (_route, invoke) => invoke();

/** Where a route's event goes instead of its handler in this process: the stack's function in a Lambda runtime. */
export type RouteDispatcher = (
  route: Route,
  event: APIGatewayProxyEventV2,
) => Promise<APIGatewayProxyStructuredResultV2>;

export function createLocalServer(
  extra: ExtraRoutes = {},
  invoker: RouteInvoker = direct,
  dispatcher?: RouteDispatcher,
): Server {
  return createServer((req, res) => {
    const requestId = randomUUID();
    handle(req, res, extra, invoker, dispatcher, requestId).catch((error: unknown) => {
      console.error('local server error', error);
      if (!res.headersSent) write(res, errorResponse(internalError(), requestId));
      else res.end();
    });
  });
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  extra: ExtraRoutes,
  invoker: RouteInvoker,
  dispatcher: RouteDispatcher | undefined,
  requestId: string,
): Promise<void> {
  const misdirected = misdirectedRequest(req);
  if (misdirected) return write(res, errorResponse(misdirected, requestId));
  // The origin-form target (`/path?query`) is a path, whatever it holds: `//host/path` is not another host.
  const target = req.url ?? '/';
  const url = target.startsWith('/') ? URL.parse(`http://localhost${target}`) : URL.parse(target);
  // A target Node's parser lets through but no URL can hold (`http://[`, a port past 65535) is the client's.
  if (!url)
    return write(
      res,
      errorResponse(
        new ValidationError('The request target is not a valid URL', [{ path: 'url', message: 'is not a valid URL' }]),
        requestId,
      ),
    );
  const method = (req.method ?? 'GET').toUpperCase();
  // HEAD of a page is its GET without the body (Node sends no body for HEAD); the API's routes answer 405.
  const extraRoute = extra[`${method === 'HEAD' ? 'GET' : method} ${url.pathname}`];
  if (extraRoute) return write(res, await extraRoute());

  const candidates = compiled.map((c) => ({ c, match: c.pattern.exec(url.pathname) })).filter((m) => m.match);
  if (candidates.length === 0)
    return write(res, errorResponse(new NotFoundError(`No route for ${url.pathname}`), requestId));
  const hit = candidates.find(({ c }) => c.route.method === method);
  if (!hit)
    return write(res, errorResponse(new MethodNotAllowedError(candidates.map(({ c }) => c.route.method)), requestId));

  const tooLarge = () =>
    errorResponse(new ApiError(413, 'payload_too_large', 'The request body may be at most 1 MiB'), requestId);
  // A declared length over the limit is refused before a byte is read, and the connection closed after the answer.
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
    res.shouldKeepAlive = false;
    return write(res, tooLarge());
  }
  const body = await readBody(req);
  if (body === null) {
    res.shouldKeepAlive = false;
    return write(res, tooLarge());
  }
  const pathParameters: Record<string, string> = {};
  for (const [i, name] of hit.c.params.entries()) {
    const raw = hit.match![i + 1]!;
    try {
      pathParameters[name] = decodeURIComponent(raw);
    } catch {
      return write(res, errorResponse(new NotFoundError(`No route for ${url.pathname}`), requestId));
    }
  }
  const event = toEvent(req, url, method, hit.c.route, pathParameters, body, requestId);
  if (dispatcher) return write(res, await dispatcher(hit.c.route, event));
  const handler = await loadHandler(hit.c.route);
  write(res, await invoker(hit.c.route, () => handler(event, lambdaContext(hit.c.route, requestId))));
}

/**
 * A request addressed to another host than this loopback server (a page whose DNS name was rebound to 127.0.0.1
 * sends its own name): 421, so such a page can read nothing from here. Browsers always send Host; a request without
 * one (HTTP/1.0) comes from no browser.
 */
export function misdirectedRequest(req: IncomingMessage): ApiError | undefined {
  const host = req.headers.host;
  const port = req.socket.localPort;
  if (host === undefined || ownHosts(port).includes(host.toLowerCase())) return undefined;
  return new ApiError(
    421,
    'misdirected_request',
    `This server answers requests addressed to ${ownHosts(port).join(', ')}`,
  );
}

const ownHosts = (port: number | undefined) => [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];

function toEvent(
  req: IncomingMessage,
  url: URL,
  method: string,
  route: Route,
  pathParameters: Record<string, string>,
  body: string,
  requestId: string,
): APIGatewayProxyEventV2 {
  // Payload 2.0 moves the Cookie header into `cookies`, one entry per cookie. Keys are set as own properties
  // (`__proto__` is a key like any other, as in the JSON event API Gateway sends).
  const headers: Record<string, string> = {};
  const put = (into: Record<string, string>, key: string, value: string) =>
    Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
  let cookies: string[] = [];
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (name === 'cookie')
      cookies = [value]
        .flat()
        .flatMap((c) => c.split(';'))
        .map((c) => c.trim())
        .filter(Boolean);
    else put(headers, name, Array.isArray(value) ? value.join(',') : value);
  }
  // API Gateway joins repeated query keys with commas.
  const queryStringParameters: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    put(
      queryStringParameters,
      key,
      Object.hasOwn(queryStringParameters, key) ? `${queryStringParameters[key]},${value}` : value,
    );
  }
  const now = new Date();
  return {
    version: '2.0',
    routeKey: `${route.method} ${route.path}`,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies.length ? { cookies } : {}),
    headers,
    ...(Object.keys(queryStringParameters).length ? { queryStringParameters } : {}),
    ...(route.path.includes('{') ? { pathParameters } : {}),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: `${route.method} ${route.path}`,
      stage: '$default',
      time: requestTime(now),
      timeEpoch: now.getTime(),
    },
    ...(body.length > 0 ? { body } : {}),
    isBase64Encoded: false,
  };
}

/** API Gateway's `requestContext.time`: `12/Mar/2020:19:03:58 +0000`. */
function requestTime(now: Date): string {
  const [, day, month, year, time] = now.toUTCString().split(' ');
  return `${day}/${month}/${year}:${time} +0000`;
}

function lambdaContext(route: Route, requestId: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: route.name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${route.name}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${route.name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 30_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

/** The body, or null as soon as it passes MAX_BODY_BYTES (the rest is not read: the connection closes after the 413). */
function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk);
      req.off('data', onData);
      req.pause();
      resolveBody(null);
    };
    req.on('data', onData);
    req.on('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function errorResponse(error: ApiError, requestId: string): APIGatewayProxyStructuredResultV2 {
  return jsonResponse(error.status, error.toBody(), { ...error.headers, 'x-request-id': requestId });
}

/**
 * Headers on every answer of the local server: no MIME sniffing, no framing (the dashboard's Delete buttons cannot
 * be clickjacked), no referrer, and a policy that loads nothing, which the pages replace with their own.
 */
const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};

function write(res: ServerResponse, result: APIGatewayProxyStructuredResultV2): void {
  res.writeHead(result.statusCode ?? 200, { ...SECURITY_HEADERS, ...(result.headers as Record<string, string>) });
  res.end(result.body ?? '');
}
