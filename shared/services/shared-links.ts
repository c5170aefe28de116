import { forgetCredential } from '../auth/authenticate.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { createCredential, revokeCredential } from './credentials.js';
import type { Credential } from '../store/credentials-repo.js';
import {
  deleteSharedLink,
  LINK_ID_PREFIX,
  listSharedLinks,
  putSharedLink,
  type SharedLink,
} from '../store/shared-links-repo.js';

/** The links a domain may hold at once (each is a live key). */
export const MAX_SHARED_LINKS = 50;

/**
 * A read-only link for a domain: a new project key with the `analytics:read` scope only, made for the link and
 * revocable on its own, never the creator's key. Its token is in the answer once; only its hash is stored.
 */
export async function createSharedLink(
  domain: string,
  input: { name: string },
  creator: Pick<Credential, 'owner' | 'eventLimit'>,
  now = new Date(),
): Promise<SharedLink & { token: string }> {
  if ((await listSharedLinks(domain)).length >= MAX_SHARED_LINKS) {
    throw new ConflictError(`The domain already has ${MAX_SHARED_LINKS} shared links; revoke one first`);
  }
  // The creator's plan limit, not the default: a link never reads past the month's limit of the key that made it.
  const key = await createCredential(
    { domains: [domain], scopes: ['analytics:read'], owner: creator.owner, eventLimit: creator.eventLimit },
    now,
  );
  const link: SharedLink = {
    id: `${LINK_ID_PREFIX}${key.key_id}`,
    key_id: key.key_id,
    name: input.name,
    created_by: creator.owner,
    created_at: now.toISOString(),
  };
  // Written after the key: a crash between the two leaves a key nobody holds the token of (it was never answered),
  // never a listed link whose key cannot be revoked.
  await putSharedLink(domain, link);
  return { ...link, token: key.token };
}

export async function findSharedLinks(domain: string) {
  return { data: await listSharedLinks(domain), meta: { domain } };
}

/**
 * Revokes the link's key first, then forgets the link: a revoked link is never left usable. It stops at once in this
 * process, and in others once their cached credentials expire (within seconds, as every revocation: API.md).
 */
export async function revokeSharedLink(domain: string, id: string, now = new Date()): Promise<{ success: true }> {
  const link = (await listSharedLinks(domain)).find((l) => l.id === id);
  if (!link) throw new NotFoundError('Shared link not found');
  await revokeCredential(link.key_id, now);
  forgetCredential(link.key_id);
  if (!(await deleteSharedLink(domain, id))) throw new NotFoundError('Shared link not found');
  return { success: true };
}
