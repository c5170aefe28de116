import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { saltOfDay, touchSession, type StoredSession } from '../store/collector-repo.js';

// Who a tracked request comes from, without keeping who it is (docs/COLLECTING.md, "Privacy"): the visitor id is a
// hash of the day's random salt, the site, the client address and the user agent. The salt changes every UTC day
// and is deleted a day later, so a visitor cannot be followed across days, nor across sites on one day; the address
// and the user agent are never stored. A session ends after SESSION_IDLE_MS without an event of its visitor.

export const SESSION_IDLE_MS = 30 * 60_000;

const salts = new Map<string, Promise<string>>();

/** The salt of the UTC day of `nowMs`, read once per day and process. */
export function daySalt(nowMs: number): Promise<string> {
  const day = new Date(nowMs).toISOString().slice(0, 10);
  let salt = salts.get(day);
  if (!salt) {
    // Kept until the day after: events of the day's last seconds still find it; then expired by TTL.
    const expiresAt = Math.floor(Date.parse(`${day}T00:00:00Z`) / 1000) + 2 * 86_400;
    salt = saltOfDay(day, randomBytes(32).toString('base64'), expiresAt);
    salt.catch(() => salts.delete(day)); // a failed read is tried again by the next event
    if (salts.size > 3) salts.clear();
    salts.set(day, salt);
  }
  return salt;
}

/** The visitor id: 128 bits of SHA-256 over the salt, site, address and user agent, in base64url. */
export function visitorHash(salt: string, domain: string, address: string, userAgent: string): string {
  return createHash('sha256')
    .update([salt, domain, address, userAgent].join('\n'))
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

/**
 * The client hashed with the day's salt: how the collector's rate limit names a client. An IPv6 client is its /64
 * network (addressNetwork), since one subscriber holds a whole /64 and may send from any address in it.
 */
export function addressHash(salt: string, address: string): string {
  const client = addressNetwork(address);
  return createHash('sha256').update(`${salt}\naddress\n${client}`).digest().subarray(0, 12).toString('base64url');
}

/**
 * The /64 network of an IPv6 address, spelled `<four groups>::/64` (`2001:db8:1:2::/64`); an IPv4 address, also one
 * written in IPv6 form (`::ffff:1.2.3.4`), as itself in dotted form; anything else unchanged.
 */
export function addressNetwork(address: string): string {
  const bare = address.split('%')[0]!; // a zone index (`fe80::1%eth0`) names the interface, not the client
  if (isIP(bare) !== 6) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return mapped[1]!;
  const [head = '', tail] = bare.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  // A trailing dotted IPv4 part takes two groups' room; it lies in the last 32 bits, never in the network's 64.
  const width = (part: string[]) => part.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const first = groups(head);
  const last = tail === undefined ? [] : groups(tail);
  const all = [...first, ...Array<string>(8 - width(first) - width(last)).fill('0'), ...last];
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** The visitor's session at `nowMs` (continued, or a new one carrying `attribution`). */
export function sessionOf(
  domain: string,
  visitorId: string,
  nowMs: number,
  attribution: Record<string, string>,
): Promise<StoredSession> {
  return touchSession(`${domain}#${visitorId}`, nowMs, SESSION_IDLE_MS, { sessionId: randomUUID(), attribution });
}
