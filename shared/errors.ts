// The error hierarchy every endpoint speaks. The message of an ApiError is written for the client;
// anything that is not an ApiError is answered as a generic 500 and only logged.

export interface ErrorDetail {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toBody(): Record<string, unknown> {
    return { error: this.code, message: this.message };
  }
}

export class ValidationError extends ApiError {
  constructor(
    message: string,
    readonly details: ErrorDetail[] = [],
    code = 'invalid_request',
  ) {
    super(400, code, message);
  }

  override toBody(): Record<string, unknown> {
    return { ...super.toBody(), details: this.details };
  }
}

/** A 400 about a single field: the most common validation failure outside the schema itself. */
export function invalidField(path: string, message: string): ValidationError {
  return new ValidationError(`${path}: ${message}`, [{ path, message }]);
}

export class UnauthorizedError extends ApiError {
  constructor(message = 'Missing or invalid API key') {
    super(401, 'unauthorized', message, { 'www-authenticate': 'Bearer' });
  }
}

export class ForbiddenError extends ApiError {
  constructor(message: string) {
    super(403, 'forbidden', message);
  }
}

export class UsageLimitError extends ApiError {
  constructor(limit: number) {
    super(403, 'usage_limit_exceeded', `This domain has used its plan limit of ${limit} events for this month`);
  }
}

export class NotFoundError extends ApiError {
  constructor(message: string) {
    super(404, 'not_found', message);
  }
}

export class ConflictError extends ApiError {
  constructor(message: string) {
    super(409, 'conflict', message);
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor(allowed: string[]) {
    super(405, 'method_not_allowed', `Method not allowed; use ${allowed.join(', ')}`, { allow: allowed.join(', ') });
  }
}

export class RateLimitedError extends ApiError {
  constructor(retryAfterSeconds: number) {
    super(429, 'rate_limited', `Rate limit exceeded; retry in ${retryAfterSeconds} seconds`, {
      'retry-after': String(retryAfterSeconds),
    });
  }
}

/** More requests of one key running and waiting at once than the limit (shared/limits/concurrency.ts). */
export class ConcurrencyLimitedError extends ApiError {
  constructor(limit: number) {
    super(
      429,
      'rate_limited',
      `At most ${limit} requests of one key may be under way at once; retry when some have finished`,
      { 'retry-after': '1' },
    );
  }
}

/** A failure of a backing service that the client can do nothing about but retry (Athena busy, throttling). */
export class ServiceUnavailableError extends ApiError {
  constructor(message = 'The query service is busy; please retry', retryAfterSeconds = 1) {
    super(503, 'service_unavailable', message, { 'retry-after': String(retryAfterSeconds) });
  }
}

export class QueryTimeoutError extends ApiError {
  constructor() {
    super(504, 'query_timeout', 'The query took too long; narrow the date range or the filters');
  }
}

export function internalError(): ApiError {
  return new ApiError(500, 'internal_error', 'An internal error occurred');
}
