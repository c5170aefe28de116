import { buildOpenApiDocument, loadRouteSpecs } from '../../shared/http/openapi.js';

/** The OpenAPI document as written to docs/openapi.json and served at GET /openapi.json. */
export async function openApiJson(): Promise<string> {
  const specs = await loadRouteSpecs((module) => import(`../../functions/${module}.ts`));
  return `${JSON.stringify(buildOpenApiDocument(specs), null, 2)}\n`;
}
