import { DEFAULT_EVENT_LIMIT } from '../config.js';
import { issueToken } from '../auth/tokens.js';
import type { Scope } from '../routes.js';
import { markSiteServed } from '../store/collector-repo.js';
import { putCredential, revokeCredential, type Credential, type CredentialType } from '../store/credentials-repo.js';

export interface NewCredential {
  type?: CredentialType;
  domains: string[];
  scopes?: Scope[];
  owner?: string;
  eventLimit?: number;
}

export interface CreatedCredential {
  token: string;
  key_id: string;
  type: CredentialType;
  domains: string[];
  scopes: Scope[];
  owner: string;
}

/** Creates a credential; the token is returned once and only its hash is stored. */
export async function createCredential(input: NewCredential, now = new Date()): Promise<CreatedCredential> {
  const type = input.type ?? 'project';
  if (input.domains.length === 0) throw new Error('a credential needs at least one domain');
  if (type === 'project' && input.domains.length !== 1) throw new Error('a project key takes exactly one domain');
  const issued = issueToken();
  const credential: Credential = {
    keyId: issued.keyId,
    type,
    domains: [...new Set(input.domains)],
    scopes: input.scopes ?? ['analytics:read', 'analytics:write'],
    owner: input.owner ?? `user_${issued.keyId}`,
    eventLimit: input.eventLimit ?? DEFAULT_EVENT_LIMIT,
    createdAt: now.toISOString(),
  };
  await putCredential(credential, issued.secretHash);
  // A key for a domain is what makes this deployment collect its events (POST /api/event).
  await Promise.all(credential.domains.map((domain) => markSiteServed(domain, now)));
  return {
    token: issued.token,
    key_id: credential.keyId,
    type,
    domains: credential.domains,
    scopes: credential.scopes,
    owner: credential.owner,
  };
}

export { revokeCredential };
