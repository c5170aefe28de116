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
 * written in IPv6 form (mapped, `::ffff:1.2.3.4` in any spelling, or compatible, `::1.2.3.4`), as itself in dotted
 * form; anything else unchanged.
 */
export function addressNetwork(address: string): string {
  const bare = address.split('%')[0]!; // a zone index (`fe80::1%eth0`) names the interface, not the client
  if (isIP(bare) !== 6) return address;
  const words = ipv6Words(bare);
  const ipv4 = () => [words[6]! >> 8, words[6]! & 255, words[7]! >> 8, words[7]! & 255].join('.');
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) return ipv4();
  if (words.slice(0, 6).every((w) => w === 0) && bare.includes('.')) return ipv4();
  return `${words
    .slice(0, 4)
    .map((w) => w.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit words of a valid IPv6 address (without a zone index), a trailing dotted IPv4 part as two. */
function ipv6Words(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const words = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const first = words(head);
  const last = tail === undefined ? [] : words(tail);
  return [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last];
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
