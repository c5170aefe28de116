import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, type TableProps } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { annotationsKey, countersKey, credentialsKey } from '../shared/store/table-schemas.js';

// The three DynamoDB tables, with the keys the local runtime creates from the same schema module. Grants name
// exact actions (and the one index) rather than `grantReadWriteData`, whose `index/*` and batch actions the
// handlers never use.

const common: Partial<TableProps> = {
  billingMode: BillingMode.PAY_PER_REQUEST,
  pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
  // Keys, annotations and the usage that bills a plan outlive the stack; delete them by hand.
  removalPolicy: RemovalPolicy.RETAIN,
};

export class DataTables extends Construct {
  readonly credentials: Table;
  readonly annotations: Table;
  readonly counters: Table;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.credentials = new Table(this, 'Credentials', {
      ...common,
      partitionKey: { name: credentialsKey.partitionKey, type: AttributeType.STRING },
    });
    this.annotations = new Table(this, 'Annotations', {
      ...common,
      partitionKey: { name: annotationsKey.partitionKey, type: AttributeType.STRING },
      sortKey: { name: annotationsKey.sortKey, type: AttributeType.STRING },
    });
    this.annotations.addLocalSecondaryIndex({
      indexName: annotationsKey.dateIndex,
      sortKey: { name: annotationsKey.dateSortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
    this.counters = new Table(this, 'Counters', {
      ...common,
      partitionKey: { name: countersKey.partitionKey, type: AttributeType.STRING },
      timeToLiveAttribute: countersKey.ttlAttribute,
    });
  }

  /** Every handler authenticates (GetItem on credentials) and counts the request (UpdateItem on counters). */
  grantRequestAdmission(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['dynamodb:GetItem'], resources: [this.credentials.tableArn] }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        resources: [this.counters.tableArn],
      }),
    );
  }

  /** The collector: no key to read; the day's salt, sessions, its address counts and served sites in counters. */
  grantCollecting(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        resources: [this.counters.tableArn],
      }),
    );
  }

  /** Issuing and revoking keys (the shared links): a new key by PutItem, a revocation by UpdateItem. */
  grantCredentialWriting(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
        resources: [this.credentials.tableArn],
      }),
    );
  }

  /** What the store's writers do in the counters table: usage counted once per import, domain days, file states, the upkeep lease (all by UpdateItem). */
  grantStoreWriting(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        resources: [this.counters.tableArn],
      }),
    );
  }

  /** What the annotation endpoints do: put, query (table and the by_date index) and delete. */
  grantAnnotations(grantee: IGrantable): void {
    const indexArn = `${this.annotations.tableArn}/index/${annotationsKey.dateIndex}`;
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:DeleteItem'],
        resources: [this.annotations.tableArn, indexArn],
      }),
    );
  }
}
