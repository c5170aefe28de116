import {
  EngineBusyError,
  EngineResourcesError,
  EngineScanLimitError,
  EngineStatementTooComplexError,
  EngineTimeoutError,
  EngineValueError,
} from '../engines/engine-errors.js';
import { QueryTimeoutError, ServiceUnavailableError, ValidationError, type ApiError } from '../errors.js';

/** A query that exhausted the engine's resources is worth another try once the engine's other work has moved on. */
const RESOURCES_RETRY_AFTER_SECONDS = 30;

/** The response an engine's error stands for; null for anything that is not an engine error. */
export function apiErrorOfEngine(error: unknown): ApiError | null {
  if (error instanceof EngineTimeoutError) return new QueryTimeoutError();
  if (error instanceof EngineBusyError) return new ServiceUnavailableError(undefined, error.retryAfterSeconds);
  if (error instanceof EngineResourcesError)
    return new ServiceUnavailableError(
      'The query needed more memory than the query engine gives one query; retry later, or narrow the date range or the filters',
      RESOURCES_RETRY_AFTER_SECONDS,
    );
  if (error instanceof EngineScanLimitError) {
    const message = 'the query would read too much data; narrow the date range or add filters';
    return new ValidationError(`date_range: ${message}`, [{ path: 'date_range', message }], 'query_too_large');
  }
  if (error instanceof EngineStatementTooComplexError) {
    const message = 'the query needs more steps than the engine plans for one query; use fewer filters';
    return new ValidationError(`filters: ${message}`, [{ path: 'filters', message }], 'query_too_large');
  }
  if (error instanceof EngineValueError)
    return new ValidationError(error.message, [{ path: 'request', message: error.message }]);
  return null;
}
