import { Logger } from '@aws-lambda-powertools/logger';

// One structured logger per process. LOG_LEVEL and POWERTOOLS_* variables configure it on AWS and locally.
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'analytics-api' });
