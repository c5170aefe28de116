import { ForbiddenError, invalidField } from '../errors.js';
import type { Credential } from '../store/credentials-repo.js';

/**
 * The domain a request may read or write, by the rules of docs/API.md ("Authentication and access"): a project key owns one domain and
 * may omit it; a personal token must name one of its domains. Naming a domain the credential does not hold
 * is a 403.
 */
export function resolveDomain(credential: Credential, requested: string | undefined): string {
  if (requested === undefined) {
    if (credential.type === 'project' && credential.domains.length === 1) return credential.domains[0]!;
    throw invalidField('domain', 'is required with a personal access token');
  }
  if (!credential.domains.includes(requested)) {
    throw new ForbiddenError(`This API key has no access to domain ${requested}`);
  }
  return requested;
}
