// The local commands against a deployed stack instead of ./.data: DynamoDB tables named by the environment
// (the stack's outputs), credentials and region from the AWS SDK's default chain, events written to S3
// (ingest/s3-store.ts).

/** Checks the table variables a command needs are set, with the fix in the message. */
export function requireAwsTables(names: ('CREDENTIALS_TABLE' | 'COUNTERS_TABLE')[]): void {
  const missing = names.filter((name) => !process.env[name]);
  if (missing.length) {
    const output = missing[0] === 'CREDENTIALS_TABLE' ? 'CredentialsTableName' : 'CountersTableName';
    const query = `"Stacks[0].Outputs[?OutputKey=='${output}'].OutputValue"`;
    throw new Error(
      `--aws needs ${missing.join(' and ')} (the stack outputs CredentialsTableName / CountersTableName), e.g. ` +
        `${missing[0]}=$(aws cloudformation describe-stacks --stack-name AnalyticsQueryApi --query ${query} --output text)`,
    );
  }
}
