import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';

// One structured logger per process. LOG_LEVEL and POWERTOOLS_* variables configure it on AWS and locally.
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'analytics-api' });

// The handler pipeline makes a child logger per request (request_id, route, key_id) and runs the endpoint's
// work inside this scope, so code far from the handler (the engine runner, the Athena engine) logs with the
// request's keys without a logger being passed through every service. The local server serves requests
// concurrently in one process, hence async-local storage rather than keys appended to the process logger.
// The same scope carries the request's deadline: the moment its answer must be on its way (the Lambda's own limit
// less a margin), which every engine call of the request shares.
interface RequestScope {
  log: Logger;
  /** Epoch milliseconds; absent outside a request. */
  deadline?: number;
}

const requestScope = new AsyncLocalStorage<RequestScope>();

export function withRequestLogger<T>(log: Logger, work: () => Promise<T>, deadline?: number): Promise<T> {
  return requestScope.run({ log, ...(deadline === undefined ? {} : { deadline }) }, work);
}

/** The current request's logger, or the process logger outside a request. */
export function requestLogger(): Logger {
  return requestScope.getStore()?.log ?? logger;
}

/** When the current request must have its answer (epoch ms); undefined outside a request. */
export function requestDeadline(): number | undefined {
  return requestScope.getStore()?.deadline;
}
