import { isIP } from 'node:net';
import { randomUUID } from 'node:crypto';
import { collectRateLimitPerMinute } from '../config.js';
import { ApiError, RateLimitedError, ValidationError } from '../errors.js';
import { checkEvent } from '../events/event-validation.js';
import { parseTrackedEvent, type TrackedEvent } from '../collect/event-body.js';
import { attributionOf, isBotAgent, isLocalPage, pagePath, platformOf } from '../collect/enrichment.js';
import { eventSink } from '../collect/event-sink.js';
import { placeOf } from '../collect/geo.js';
import { addressHash, daySalt, sessionOf, visitorHash } from '../collect/visitors.js';
import { countInMinute } from '../limits/limiter.js';
import { isSiteServed } from '../store/collector-repo.js';

// POST /api/event (docs/COLLECTING.md): one tracked event, checked, attributed to a visitor and a session, enriched,
// and written to the event sink as lines of the import format, each checked by the importer's own rules first, so a
// line the collector accepts is never rejected at import.

export interface CollectRequest {
  body: string | undefined;
  userAgent: string | undefined;
  /** The address the request came from (API Gateway's sourceIp): what the rate limit counts. */
  connectedFrom: string;
  /** The X-Forwarded-For header: a server sending its visitors' events names each visitor's address there. */
  forwardedFor: string | undefined;
  nowMs?: number;
}

/** What happened to an accepted request (each answered 202, as Plausible answers). */
export type CollectOutcome = 'recorded' | 'bot' | 'engagement';

export class DomainNotServedError extends ApiError {
  constructor(domain: string) {
    super(
      403,
      'domain_not_served',
      `This deployment does not collect events for "${domain}": make an API key for it first ` +
        '(npm run keys -- create --domain <domain>), which registers the site',
    );
  }
}

export async function collectEvent(request: CollectRequest): Promise<CollectOutcome> {
  const nowMs = request.nowMs ?? Date.now();
  const event = parseTrackedEvent(request.body);
  // Plausible's newer script reports time on page as `engagement` events; this store has no place for them.
  if (event.name === 'engagement') return 'engagement';
  if (isBotAgent(request.userAgent)) return 'bot';
  const userAgent = request.userAgent!;
  const salt = await daySalt(nowMs);
  await admitAddress(addressHash(salt, request.connectedFrom), nowMs);
  for (const domain of event.domains) if (!(await servedDomain(domain))) throw new DomainNotServedError(domain);

  const address = visitorAddress(request);
  const common = {
    timestamp: new Date(nowMs).toISOString(),
    url_path: pagePath(event),
    ...placeOf(address),
    ...platformOf(userAgent),
    ...(isLocalPage(event.url) ? { is_dev: true } : {}),
  };
  const attribution = attributionOf(event);
  // The rows are checked with this event's own attribution before any session is touched: a value the store cannot
  // keep (a NUL in a UTM tag) is refused here, and never becomes the attribution every later event of the session
  // carries. What a session stored was checked so when it began.
  for (const stored of rowsOf(event, {
    domain: event.domains[0],
    visitor_id: '-',
    session_id: '-',
    ...attribution,
    ...common,
  }))
    storable(stored);
  const lines: string[] = [];
  for (const domain of event.domains) {
    const visitorId = visitorHash(salt, domain, address, userAgent);
    const session = await sessionOf(domain, visitorId, nowMs, { ...attribution });
    const row = { domain, visitor_id: visitorId, session_id: session.sessionId, ...session.attribution, ...common };
    for (const stored of rowsOf(event, row)) lines.push(JSON.stringify(storable(stored)));
  }
  await eventSink().write(lines);
  return 'recorded';
}

/** The row, when the importer's rules accept it; else a 400 with the rule. */
function storable(row: Record<string, unknown>): Record<string, unknown> {
  const checked = checkEvent(row);
  if (!checked.ok)
    throw new ValidationError(`The event cannot be stored: ${checked.reason}`, [
      { path: 'body', message: checked.reason },
    ]);
  return row;
}

/** The rows of one event for one site: a pageview, or a custom event and, with revenue, its payment. */
function rowsOf(event: TrackedEvent, row: Record<string, unknown>): Record<string, unknown>[] {
  const props = Object.keys(event.props).length > 0 ? { event_properties: event.props } : {};
  if (event.name === 'pageview') return [{ ...row, type: 'pageview', ...props }];
  const custom = { ...row, type: 'event', event_name: event.name, ...props };
  if (!event.revenue) return [custom];
  return [
    custom,
    {
      ...row,
      type: 'revenue',
      // Plausible's events carry no transaction id: each accepted request is its own payment.
      transaction_id: randomUUID(),
      amount_cents: event.revenue.amountCents,
      currency: event.revenue.currency,
      revenue_event: event.name,
    },
  ];
}

/**
 * The visitor's address: the first address of X-Forwarded-For when it is one, else the connection's; an IPv4
 * address written in IPv6 form (`::ffff:1.2.3.4`, as a dual-stack socket reports it) as IPv4.
 */
function visitorAddress(request: CollectRequest): string {
  const first = request.forwardedFor?.split(',')[0]?.trim();
  const address = first && isIP(first) ? first : request.connectedFrom;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

/** One more event of the (hashed) client this minute, or a 429: the keyed routes' minute counter (addressHash names the client). */
async function admitAddress(address: string, nowMs: number): Promise<void> {
  const result = await countInMinute(
    (windowStart) => `collect#${address}#${windowStart}`,
    collectRateLimitPerMinute(),
    nowMs,
  );
  if (!result.admitted) throw new RateLimitedError(result.retryAfter);
}

/** Served domains for a while once seen (a key is rarely withdrawn), unserved ones briefly (a new key bites soon). */
const SERVED_CACHE_MS = 5 * 60_000;
const UNSERVED_CACHE_MS = 10_000;
const servedCache = new Map<string, { served: boolean; until: number }>();

async function servedDomain(domain: string): Promise<boolean> {
  const cached = servedCache.get(domain);
  if (cached && cached.until > Date.now()) return cached.served;
  const served = await isSiteServed(domain);
  if (servedCache.size > 10_000) servedCache.clear();
  servedCache.set(domain, { served, until: Date.now() + (served ? SERVED_CACHE_MS : UNSERVED_CACHE_MS) });
  return served;
}

/** Forgets what the collector knows of served domains (tests that make keys while a server runs). */
export function forgetServedDomains(): void {
  servedCache.clear();
}
