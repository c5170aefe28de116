import { mkdirSync, writeFileSync } from 'node:fs';
import { openApiJson } from '../local/server/openapi-document.js';
import { openApiTypes } from '../local/server/openapi-types.js';

// `npm run openapi`: writes docs/openapi.json and the client types generated from it, dashboard/api-types.ts
// (test/api/openapi.test.ts fails when either committed file is stale).
const json = await openApiJson();
writeFileSync(new URL('../docs/openapi.json', import.meta.url), json);
mkdirSync(new URL('../dashboard/', import.meta.url), { recursive: true });
writeFileSync(new URL('../dashboard/api-types.ts', import.meta.url), await openApiTypes(json));
console.log('wrote docs/openapi.json and dashboard/api-types.ts');
