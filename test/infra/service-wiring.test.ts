import { beforeAll, describe, expect, it } from 'vitest';
import { identityPolicies, serviceMayCall } from '../support/aws-rules/iam.js';
import { ACCOUNT, REGION, synthesizeResolved, type Json, type ResolvedStack } from '../support/aws-rules/template.js';
import { runSimulation } from '@cloud-copilot/iam-simulate';

// What the template wires between AWS services, evaluated as AWS evaluates it (an IAM policy evaluator over the
// synthesized template's resource and key policies): a CloudWatch alarm can publish to its topic through the
// topic's key, S3 can send its notifications to the ingest queue, Lambda's poller can read that queue with the
// ingest function's role, and EventBridge may invoke upkeep. None of these is exercised by moto or dynalite.

let stack: ResolvedStack;
beforeAll(() => {
  stack = synthesizeResolved();
});

const ofType = (type: string) => Object.entries(stack.resources).filter(([, r]) => r.Type === type);
const topicPolicyOf = (topicArn: string): Json =>
  ofType('AWS::SNS::TopicPolicy').find(([, p]) => p.Properties.Topics.includes(topicArn))?.[1].Properties
    .PolicyDocument;
const queuePolicyOf = (queueUrl: string): Json =>
  ofType('AWS::SQS::QueuePolicy').find(([, p]) => p.Properties.Queues.includes(queueUrl))?.[1].Properties
    .PolicyDocument;
const keyPolicyOf = (keyArn: string): Json =>
  ofType('AWS::KMS::Key').find(([id]) => keyArn.endsWith(`key/key-${id.toLowerCase()}`))?.[1].Properties.KeyPolicy;

describe('service-to-service wiring in the template', () => {
  it("every alarm with actions can publish to its topics, through each topic's own KMS key", async () => {
    const alarms = ofType('AWS::CloudWatch::Alarm').filter(([, a]) => (a.Properties.AlarmActions ?? []).length > 0);
    expect(alarms.length).toBeGreaterThan(0);
    for (const [alarmId, alarm] of alarms) {
      const alarmArn = `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:${alarmId}`;
      for (const topicArn of alarm.Properties.AlarmActions as string[]) {
        const context = { 'aws:SourceArn': alarmArn };
        expect(
          await serviceMayCall('cloudwatch.amazonaws.com', 'sns:Publish', topicArn, topicPolicyOf(topicArn), context),
          `${alarmId} → ${topicArn}`,
        ).toBe('Allowed');
        const topic = ofType('AWS::SNS::Topic').find(([id]) => topicArn.endsWith(`:${id}`))![1];
        const keyId = String(topic.Properties.KmsMasterKeyId ?? '');
        if (!keyId) continue;
        // An AWS-managed key's policy is AWS's: CloudWatch is not among those it lets encrypt.
        expect(keyId, 'a topic an alarm publishes to must not use an AWS-managed key').not.toMatch(/alias\/aws\//);
        for (const action of ['kms:GenerateDataKey', 'kms:Decrypt']) {
          expect(
            await serviceMayCall('cloudwatch.amazonaws.com', action, keyId, keyPolicyOf(keyId), context),
            `${action} on ${keyId}`,
          ).toBe('Allowed');
        }
      }
    }
  });

  it("S3 may send the bucket's notifications to each queue they name", async () => {
    const notifications = ofType('Custom::S3BucketNotifications');
    expect(notifications).toHaveLength(1);
    const { BucketName, NotificationConfiguration } = notifications[0]![1].Properties;
    const queues = NotificationConfiguration.QueueConfigurations as { QueueArn: string }[];
    expect(queues.length).toBeGreaterThan(0);
    for (const { QueueArn } of queues) {
      const queueId = QueueArn.split(':').pop()!;
      const queue = stack.resources[queueId]!;
      // SQS-managed or none: a KMS key of our own would need S3 in its key policy.
      expect(queue.Properties.KmsMasterKeyId).toBeUndefined();
      const url = `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${queueId}`;
      expect(
        await serviceMayCall('s3.amazonaws.com', 'sqs:SendMessage', QueueArn, queuePolicyOf(url), {
          'aws:SourceArn': `arn:aws:s3:::${BucketName}`,
        }),
      ).toBe('Allowed');
    }
  });

  it("each SQS event source can be polled with its function's role", async () => {
    for (const [, mapping] of ofType('AWS::Lambda::EventSourceMapping')) {
      const functionId = String(mapping.Properties.FunctionName);
      const roleArn = String(stack.resources[functionId]!.Properties.Role);
      const roleId = roleArn.split('/').pop()!;
      for (const action of [
        'sqs:ReceiveMessage',
        'sqs:DeleteMessage',
        'sqs:ChangeMessageVisibility',
        'sqs:GetQueueAttributes',
      ]) {
        const result = await runSimulation(
          {
            request: {
              principal: `arn:aws:sts::${ACCOUNT}:assumed-role/${roleId}/poller`,
              action,
              resource: { resource: mapping.Properties.EventSourceArn, accountId: ACCOUNT },
              contextVariables: { 'aws:SecureTransport': 'true' },
            },
            identityPolicies: identityPolicies(stack, roleId),
            serviceControlPolicies: [],
            resourceControlPolicies: [],
            resourcePolicy: queuePolicyOf(
              `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${String(mapping.Properties.EventSourceArn).split(':').pop()}`,
            ),
          },
          {},
        );
        expect(result.resultType === 'error' ? result.errors : result.overallResult, `${functionId} ${action}`).toBe(
          'Allowed',
        );
      }
    }
  });

  it('each scheduled rule may invoke its target function', () => {
    const rules = ofType('AWS::Events::Rule');
    expect(rules.length).toBeGreaterThan(0);
    for (const [ruleId, rule] of rules) {
      for (const target of rule.Properties.Targets as { Arn: string }[]) {
        const permission = ofType('AWS::Lambda::Permission').find(
          ([, p]) =>
            p.Properties.Principal === 'events.amazonaws.com' &&
            p.Properties.SourceArn === `arn:aws:events:${REGION}:${ACCOUNT}:rule/${ruleId}` &&
            target.Arn.endsWith(`:function:${p.Properties.FunctionName.split(':').pop()}`),
        );
        expect(permission, `${ruleId} → ${target.Arn}`).toBeDefined();
      }
    }
  });
});
