/** The stack `cdk deploy` creates; the Glue database is named after it (`analytics_query_api`). */
export const STACK_NAME = 'AnalyticsQueryApi';
