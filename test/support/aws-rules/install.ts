import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, inject } from 'vitest';
import { DYNAMODB_ITEM_MAX_BYTES, dynamoItemBytes } from '../../../shared/aws/service-limits.js';
import { authorize, iamRequestsOf } from './iam.js';
import { requestLimitViolations, writtenItems } from './request-limits.js';
import type { Json, ResolvedStack } from './template.js';

// Installed in every test worker (vitest.config.ts, setupFiles): one middleware on every AWS SDK client the tests
// or the code under test build, which holds each request to what AWS enforces and moto, dynalite and the Athena
// emulator do not:
//   - the documented request limits (request-limits.ts), and after each DynamoDB update the item's size;
//   - IAM: a call made while a deployed function runs (asFunction) is evaluated against that function's role in
//     the synthesized template (iam.ts); a call from the functions' own code outside asFunction is itself an error,
//     so no test can run deployed code without its role.
// A violation rejects the call, as AWS would, and also fails the running test in afterEach, should the code under
// test catch the error and carry on.

const acting = new AsyncLocalStorage<string>();
/** Set while a test sends what AWS refuses on purpose, to see a stand-in refuse it too. */
const probing = new AsyncLocalStorage<boolean>();
const violations: string[] = [];
const instrumented = new WeakSet<object>();
/** Clients the checks themselves use: never checked. */
const checkers = new WeakSet<object>();
let stack: ResolvedStack | undefined;

/** Runs `work` as the deployed function `name` (`Ingest`, `Upkeep`, or a route's name): its SDK calls are authorized against that function's role. */
export function asFunction<T>(name: string, work: () => Promise<T>): Promise<T> {
  return acting.run(name, work);
}

/**
 * Runs `work` as the operator: a person's own credentials (`npm run import -- --s3`, `keys --aws`), which the stack
 * does not define; the request limits still hold.
 */
export function asOperator<T>(work: () => Promise<T>): Promise<T> {
  return acting.run(OPERATOR, work);
}
const OPERATOR = '(operator)';

/**
 * Runs `work` with the request limits unchecked: for the tests of a stand-in's own refusals (the Athena emulator
 * refusing a parameter over 1024 characters), which must reach the stand-in. IAM is still evaluated.
 */
export function sendingWhatAwsRefuses<T>(work: () => Promise<T>): Promise<T> {
  return probing.run(true, work);
}

/** Wraps a handler so that each invocation runs as the deployed function `name`. */
export function deployed<A extends unknown[], R>(
  name: string,
  handler: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return (...args) => asFunction(name, () => handler(...args));
}

/** The violations recorded since the last test ended (for the tests of these rules themselves). */
export function takeViolations(): string[] {
  return violations.splice(0);
}

const resolvedStack = (): ResolvedStack => (stack ??= inject('awsStack') as ResolvedStack);

const serviceOf = (clientName: string | undefined): string =>
  (clientName ?? '')
    .replace(/Client$/, '')
    .replace(/^DynamoDBDocument$/, 'DynamoDB')
    .toLowerCase();
/** Frames of the code that runs deployed (function handlers and the writers' own modules). */
const DEPLOYED_FRAME = /\/(functions|ingest)\/[^/]+\.ts/;

function checkingMiddleware(client: { config: Json }) {
  let raw: DynamoDBClient | undefined;
  const rawClient = async () => {
    if (!raw) {
      const endpoint = client.config.endpoint ? await client.config.endpoint() : undefined;
      raw = new DynamoDBClient({
        region: await client.config.region(),
        credentials: await client.config.credentials(),
        ...(endpoint
          ? {
              endpoint: `${endpoint.protocol}//${endpoint.hostname}${endpoint.port ? `:${endpoint.port}` : ''}${endpoint.path ?? ''}`,
            }
          : {}),
      });
      checkers.add(raw);
    }
    return raw;
  };
  return (next: (args: Json) => Promise<Json>, context: Json) => async (args: Json) => {
    const service = serviceOf(context.clientName);
    const command = String(context.commandName);
    const call = `${service} ${command}`;
    const fail = (message: string) => {
      violations.push(message);
      const error = new Error(message);
      error.name = 'AwsRuleViolation';
      throw error;
    };
    const problems = probing.getStore() ? [] : requestLimitViolations(service, command, args.input);
    if (problems.length) fail(`${call} would be refused by AWS: ${problems.join('; ')}`);
    const principal = acting.getStore();
    const caller = (context as { __caller?: string }).__caller;
    if (principal === OPERATOR) {
      // No role to check.
    } else if (principal)
      await authorize(
        resolvedStack(),
        principal,
        iamRequestsOf(resolvedStack(), service, command, args.input),
        call,
      ).catch((e: Error) => fail(e.message));
    else if (caller && DEPLOYED_FRAME.test(caller))
      fail(
        `${call} was made by deployed code outside asFunction(): run handlers with their role (test/support/aws-rules/install.ts)\n${caller}`,
      );
    const result = await next(args);
    if (service === 'dynamodb') {
      for (const { table, key } of writtenItems(command, args.input)) {
        const { Item } = await (
          await rawClient()
        ).send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }));
        if (Item && dynamoItemBytes(Item) > DYNAMODB_ITEM_MAX_BYTES)
          fail(
            `${call} left an item of ${dynamoItemBytes(Item)} bytes in ${table}; DynamoDB refuses items over ${DYNAMODB_ITEM_MAX_BYTES}`,
          );
      }
    }
    return result;
  };
}

// Every client of the AWS SDK v3 shares smithy's Client class, whose send() every call goes through.
const clientPrototype = Object.getPrototypeOf(DynamoDBClient.prototype) as { send: (...args: Json[]) => Json };
const originalSend = clientPrototype.send;
if (!(originalSend as { __awsRules?: boolean }).__awsRules) {
  const send = function (this: Json, command: Json, ...rest: Json[]) {
    if (!checkers.has(this)) {
      if (!instrumented.has(this.middlewareStack)) {
        instrumented.add(this.middlewareStack);
        this.middlewareStack.add(checkingMiddleware(this), {
          step: 'build',
          name: 'awsRulesMiddleware',
          priority: 'high',
        });
      }
      // The caller's frames, for the rule that deployed code runs with a role: read here, before any await.
      const caller = new Error().stack?.split('\n').slice(2, 8).join('\n');
      command.middlewareStack.add(
        (next: Json, context: Json) => (args: Json) => {
          context.__caller = caller;
          return next(args);
        },
        { step: 'initialize', name: 'awsRulesCaller', priority: 'high', override: true },
      );
    }
    return originalSend.call(this, command, ...rest);
  };
  (send as { __awsRules?: boolean }).__awsRules = true;
  clientPrototype.send = send;
}

afterEach(() => {
  const found = takeViolations();
  if (found.length) throw new Error(`AWS would have refused what this test did:\n${[...new Set(found)].join('\n')}`);
});
