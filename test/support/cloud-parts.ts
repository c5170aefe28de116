import { afterAll, beforeAll } from 'vitest';
import { startMoto, type MotoServer } from '../../local/tools/moto-server.js';
import { startTestApi, type TestApi } from './test-api.js';

/**
 * moto's server, and a test API whose dynalite holds usage, domain days and file states: started before the calling
 * file's tests, stopped after them.
 */
export function cloudParts(): { readonly moto: MotoServer } {
  const parts = {} as { moto: MotoServer; api?: TestApi };
  beforeAll(async () => {
    parts.moto = await startMoto();
    parts.api = await startTestApi();
  }, 180_000);
  afterAll(async () => {
    await parts.api?.close();
    await parts.moto?.stop();
  });
  return parts;
}
