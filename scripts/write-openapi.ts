import { writeFileSync } from 'node:fs';
import { openApiJson } from '../local/server/openapi-document.js';

// `npm run openapi`: writes docs/openapi.json (test/openapi.test.ts fails when the committed file is stale).
writeFileSync(new URL('../docs/openapi.json', import.meta.url), await openApiJson());
console.log('wrote docs/openapi.json');
