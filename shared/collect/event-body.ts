import * as z from 'zod';
import { MAX_EVENT_DOMAIN_LENGTH, MAX_PROPERTY_KEY_LENGTH, siteOfHost } from '../events/event-validation.js';
import { domainSchema } from '../requests/fields.js';
import { ValidationError } from '../errors.js';
import { parseInput } from '../http/validation.js';

// The body of POST /api/event: Plausible's Events API (docs/COLLECTING.md), so Plausible's trackers and integrations
// work against this endpoint unchanged. Each field has Plausible's long and short name (`name`/`n`, `url`/`u`, ...);
// fields this service does not use (`v`, `sd`, `e`, ...) are ignored, as Plausible ignores them. Limits are
// Plausible's, except where the store is stricter (a property key of at most 100 characters, docs/EVENT-FORMAT.md).

/** The longest request body: room for 30 properties of 2,000 characters and a URL and referrer of 2,000 each. */
export const MAX_COLLECT_BODY_BYTES = 128 * 1024;
export const MAX_EVENT_NAME_LENGTH = 120;
export const MAX_URL_LENGTH = 2000;
export const MAX_PROPERTIES = 30;
export const MAX_PROPERTY_VALUE_LENGTH = 2000;
/** One event may be recorded for several sites (`"d": "a.com,b.com"`), at most this many. */
export const MAX_EVENT_DOMAINS = 10;

/** What a valid body asks for: one event, for one or more sites. */
export interface TrackedEvent {
  name: string;
  url: URL;
  /** The sites to record it for, lower case, without `www.`. */
  domains: string[];
  referrer?: string;
  /** Properties with a value kept as text; empty, null, list and object values left out, as Plausible does. */
  props: Record<string, string>;
  revenue?: { amountCents: number; currency: string };
  /** `h`: the page uses hash-based routing, so the fragment is part of the page's path. */
  hashMode: boolean;
}

const text = (max: number) => z.string().max(max, `must be at most ${max} characters`);
const propertyValue = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.unknown()),
  z.record(z.string(), z.unknown()),
]);

/** Properties: an object, or the JSON text of one (Plausible's older scripts send `m` as text). */
const propsSchema = z
  .union([z.record(z.string(), propertyValue), z.string()])
  .nullable()
  .optional();

const revenueSchema = z.strictObject({
  amount: z.union([z.number(), z.string().regex(/^-?\d{1,16}(\.\d+)?$/, 'must be a decimal number, e.g. "10.29"')]),
  currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code in upper case, e.g. "EUR"'),
});

const bodySchema = z
  .looseObject({
    n: text(MAX_EVENT_NAME_LENGTH).optional(),
    name: text(MAX_EVENT_NAME_LENGTH).optional(),
    u: text(MAX_URL_LENGTH).optional(),
    url: text(MAX_URL_LENGTH).optional(),
    d: text(MAX_URL_LENGTH).optional(),
    domain: text(MAX_URL_LENGTH).optional(),
    r: text(MAX_URL_LENGTH).nullable().optional(),
    referrer: text(MAX_URL_LENGTH).nullable().optional(),
    p: propsSchema,
    props: propsSchema,
    m: propsSchema,
    meta: propsSchema,
    $: revenueSchema.nullable().optional(),
    revenue: revenueSchema.nullable().optional(),
    h: z.union([z.number(), z.boolean()]).nullable().optional(),
    hashMode: z.union([z.number(), z.boolean()]).nullable().optional(),
    i: z.boolean().nullable().optional(),
    interactive: z.boolean().nullable().optional(),
  })
  .meta({
    id: 'TrackedEvent',
    description:
      "Plausible's event body: `name` (`n`) and `url` (`u`) are required; `domain` (`d`, one site or several " +
      "separated by commas; default the URL's host), `referrer` (`r`), `props` (`p`, up to 30), `revenue` (`$`), " +
      '`interactive` (`i`) and `hashMode` (`h`) are optional.',
    example: { name: 'pageview', url: 'https://shop.example.com/pricing?utm_source=news', domain: 'shop.example.com' },
  });

export const collectBodySchema = bodySchema;

/** Parses the body's text (JSON, whatever the content type: Plausible's script sends text/plain) into the event. */
export function parseTrackedEvent(body: string | undefined): TrackedEvent {
  if (body === undefined || body.trim() === '')
    throw new ValidationError('The body must be a JSON object with at least "name" and "url"', [
      { path: 'body', message: 'is required' },
    ]);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new ValidationError('The body is not valid JSON', [{ path: 'body', message: 'is not valid JSON' }]);
  }
  const raw = parseInput(bodySchema, json, 'body');
  const name = (raw.n ?? raw.name)?.trim();
  if (!name) throw invalid('name', 'is required (the event name, "pageview" for a page view)');
  const urlText = raw.u ?? raw.url;
  if (urlText === undefined) throw invalid('url', 'is required (the page URL)');
  const url = URL.parse(urlText);
  if (!url) throw invalid('url', 'must be an absolute URL, e.g. "https://example.com/pricing"');
  if (url.protocol === 'data:' || url.protocol === 'javascript:')
    throw invalid('url', `must not use the ${url.protocol} scheme`);

  const domainText = (raw.d ?? raw.domain)?.trim();
  if (domainText === '') throw invalid('domain', 'must not be empty');
  const domains = [
    ...new Set(
      (domainText ?? url.hostname)
        .split(',')
        .map(siteName)
        .filter((d) => d !== ''),
    ),
  ];
  if (domains.length === 0) throw invalid('domain', 'is required when the URL has no host');
  if (domains.length > MAX_EVENT_DOMAINS) throw invalid('domain', `may name at most ${MAX_EVENT_DOMAINS} sites`);
  for (const domain of domains)
    if (!domainSchema.safeParse(domain).success || domain.length > MAX_EVENT_DOMAIN_LENGTH)
      throw invalid('domain', `"${domain.slice(0, 100)}" is not a domain name (e.g. "example.com")`);

  const referrer = (raw.r ?? raw.referrer)?.trim() || undefined;
  const revenue = raw.$ ?? raw.revenue ?? undefined;
  if (revenue && name === 'pageview') throw invalid('revenue', 'goes with a custom event, not with a pageview');

  return {
    name,
    url,
    domains,
    ...(referrer ? { referrer } : {}),
    // From the JSON as parsed (its values checked above): a schema's record output drops a `__proto__` key, which
    // the importer's rules refuse as they refuse `constructor`.
    props: properties(propsOf(json as Record<string, unknown>)),
    ...(revenue ? { revenue: { amountCents: toCents(revenue.amount), currency: revenue.currency } } : {}),
    hashMode: Boolean(raw.h ?? raw.hashMode),
  };
}

/** A site as Plausible names it, and as a referrer's domain is named (event-validation.ts). */
export const siteName = siteOfHost;

/** The first of the body's property fields given (`p`, `props`, `m`, `meta`), null counting as not given. */
function propsOf(body: Record<string, unknown>): Record<string, unknown> | string | undefined {
  return (body.p ?? body.props ?? body.m ?? body.meta ?? undefined) as Record<string, unknown> | string | undefined;
}

function properties(input: Record<string, unknown> | string | undefined): Record<string, string> {
  let object = input;
  if (typeof object === 'string') {
    try {
      object = JSON.parse(object) as Record<string, unknown>;
    } catch {
      throw invalid('props', 'must be an object, or the JSON text of one');
    }
    if (typeof object !== 'object' || object === null || Array.isArray(object))
      throw invalid('props', 'must be an object, or the JSON text of one');
  }
  // Without a prototype, a key such as `constructor` is an own property like any other (the importer's rules refuse it).
  const kept: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [key, value] of Object.entries(object ?? {})) {
    if (value === null || value === '' || typeof value === 'object') continue;
    if (key.length > MAX_PROPERTY_KEY_LENGTH)
      throw invalid(
        `props.${key.slice(0, 40)}…`,
        `a property name may have at most ${MAX_PROPERTY_KEY_LENGTH} characters`,
      );
    const textValue = String(value);
    if (textValue.length > MAX_PROPERTY_VALUE_LENGTH)
      throw invalid(`props.${key}`, `a property value may have at most ${MAX_PROPERTY_VALUE_LENGTH} characters`);
    kept[key] = textValue;
  }
  if (Object.keys(kept).length > MAX_PROPERTIES)
    throw invalid('props', `may hold at most ${MAX_PROPERTIES} properties`);
  return kept;
}

/** An amount in the currency's units as whole hundredths, rounded half away from zero, from its decimal text. */
export function toCents(amount: number | string): number {
  const textAmount = typeof amount === 'number' ? amountText(amount) : amount;
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(textAmount);
  if (!match) throw invalid('revenue.amount', 'must be a finite decimal number');
  const [, sign, whole, fraction = ''] = match;
  const hundredths =
    Number(whole) * 100 + Number((fraction + '00').slice(0, 2)) + (Number(fraction[2] ?? 0) >= 5 ? 1 : 0);
  if (!Number.isSafeInteger(hundredths))
    throw invalid('revenue.amount', `must be at most ${Math.floor(Number.MAX_SAFE_INTEGER / 100)} in absolute value`);
  return sign === '-' && hundredths !== 0 ? -hundredths : hundredths;
}

function amountText(amount: number): string {
  if (!Number.isFinite(amount)) throw invalid('revenue.amount', 'must be a finite decimal number');
  // Plain decimal digits (no exponent) for any double that is a sane amount; larger ones fail the range check.
  return Math.abs(amount) >= 1e21
    ? '1000000000000000000000'
    : amount.toFixed(Math.min(20, Math.max(0, decimals(amount))));
}

function decimals(amount: number): number {
  const [, fraction = '', exponent = '0'] = /^-?\d*(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(amount)) ?? [];
  return fraction.length - Number(exponent);
}

function invalid(path: string, message: string): ValidationError {
  return new ValidationError(`${path}: ${message}`, [{ path, message }]);
}
