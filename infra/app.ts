import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { AnalyticsApiStack } from './analytics-api-stack.js';
import { settingsFromContext } from './settings.js';
import { STACK_NAME } from './stack-name.js';

// `npx cdk synth` / `cdk deploy` entry (cdk.json). No env: the stack synthesizes offline, for any account.

const app = new App();
new AnalyticsApiStack(app, STACK_NAME, {
  description: 'Analytics query API: HTTP API, Lambda handlers, DynamoDB, Athena over S3 Parquet',
  settings: settingsFromContext(app.node),
});
// The checks test/infra/infra.test.ts asserts on. cdk-nag 3 is a policy-validation plugin: an unacknowledged
// finding fails `cdk synth` with a report.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
