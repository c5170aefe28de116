import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { routeList } from '../../shared/routes.js';

// The functions of a synthesized stack (`cdk.out`, as `npx cdk synth` writes it), as a Lambda runtime needs them:
// each one's bundle folder, handler, memory, timeout and environment from the template, named as the code names
// them (`Ingest`, `Upkeep`, and each route's name), with the HTTP API route that invokes it.

export interface StackFunction {
  name: string;
  logicalId: string;
  /** The bundle: `cdk.out/asset.<hash>`. */
  asset: string;
  handler: string;
  memoryMb: number;
  timeoutSeconds: number;
  /** The template's variables; a value that is not text (a Ref, a GetAtt) is the name of what it refers to. */
  environment: Record<string, string | { ref: string }>;
  /** `GET /v1/annotations`, for a route's function. */
  routeKey?: string;
}

/** A template value: shapes as CloudFormation gives them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export function stackFunctions(cdkOut: string, stackName = 'AnalyticsQueryApi'): StackFunction[] {
  const template = JSON.parse(readFileSync(join(cdkOut, `${stackName}.template.json`), 'utf8')) as {
    Resources: Record<string, { Type: string; Properties: Json }>;
  };
  const resources = template.Resources;
  // Route key → function, through the route's integration.
  const routeOf = new Map<string, string>();
  for (const r of Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route')) {
    const integrationId = JSON.stringify(r.Properties.Target).match(/"Ref":"([^"]+)"/)?.[1];
    const uri = integrationId ? resources[integrationId]?.Properties.IntegrationUri : undefined;
    const functionId = uri?.['Fn::GetAtt']?.[0] as string | undefined;
    if (functionId) routeOf.set(functionId, r.Properties.RouteKey);
  }
  const functions: StackFunction[] = [];
  for (const [logicalId, r] of Object.entries(resources)) {
    if (r.Type !== 'AWS::Lambda::Function' || !r.Properties.Code?.S3Key) continue;
    const description = String(r.Properties.Description ?? '');
    const routeKey = routeOf.get(logicalId);
    const route = routeList.find((x) => `${x.method} ${x.path}` === routeKey);
    const name =
      route?.name ??
      (description.startsWith('ingest-events:')
        ? 'Ingest'
        : description.startsWith('store-upkeep:')
          ? 'Upkeep'
          : undefined);
    if (!name) continue;
    const variables = (r.Properties.Environment?.Variables ?? {}) as Record<string, Json>;
    functions.push({
      name,
      logicalId,
      asset: join(resolve(cdkOut), `asset.${String(r.Properties.Code.S3Key).replace(/\.zip$/, '')}`),
      handler: r.Properties.Handler,
      memoryMb: r.Properties.MemorySize ?? 128,
      timeoutSeconds: r.Properties.Timeout ?? 3,
      environment: Object.fromEntries(
        Object.entries(variables).map(([k, v]) => [
          k,
          typeof v === 'string' ? v : { ref: String(v.Ref ?? v['Fn::GetAtt']?.[0] ?? JSON.stringify(v)) },
        ]),
      ),
      ...(routeKey ? { routeKey } : {}),
    });
  }
  return functions;
}
