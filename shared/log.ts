import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';

// One structured logger per process. LOG_LEVEL and POWERTOOLS_* variables configure it on AWS and locally.
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'analytics-api' });

// The handler pipeline makes a child logger per request (request_id, route, key_id) and runs the endpoint's
// work inside this scope, so code far from the handler (the engine runner, the Athena engine) logs with the
// request's keys without a logger being passed through every service. The local server serves requests
// concurrently in one process, hence async-local storage rather than keys appended to the process logger.
const requestScope = new AsyncLocalStorage<Logger>();

export function withRequestLogger<T>(log: Logger, work: () => Promise<T>): Promise<T> {
  return requestScope.run(log, work);
}

/** The current request's logger, or the process logger outside a request. */
export function requestLogger(): Logger {
  return requestScope.getStore() ?? logger;
}
