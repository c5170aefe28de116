import type { NewCredential } from '../../shared/services/credentials.js';
import type { TestApi } from './test-api.js';

// The rate limit is 100 requests per minute per key (counted in DynamoDB). Tests that send hundreds of
// requests take a fresh key of the same kind every `every` requests, so they never meet a 429 by accident.
// A caller that sends several requests with one token says how many (`uses`): the key is rotated first when they
// would take it past `every`, however quickly the requests follow the ones before.

export function rotatingToken(api: TestApi, credential: NewCredential, every = 90): (uses?: number) => Promise<string> {
  let token: string | undefined;
  let used = 0;
  return async (uses = 1) => {
    if (uses > every) throw new Error(`rotatingToken: ${uses} uses of one token are more than ${every}`);
    if (!token || used + uses > every) {
      token = (await api.createKey(credential)).token;
      used = 0;
    }
    used += uses;
    return token;
  };
}
