import type { NewCredential } from '../../shared/services/credentials.js';
import type { TestApi } from './test-api.js';

// The rate limit is 100 requests per minute per key (counted in DynamoDB). Tests that send hundreds of
// requests take a fresh key of the same kind every `every` requests, so they never meet a 429 by accident.

export function rotatingToken(api: TestApi, credential: NewCredential, every = 90): () => Promise<string> {
  let token: string | undefined;
  let used = 0;
  return async () => {
    if (!token || used >= every) {
      token = (await api.createKey(credential)).token;
      used = 0;
    }
    used += 1;
    return token;
  };
}
