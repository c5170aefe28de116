import {
  domainSchema,
  MAX_PATH_SEGMENT_LENGTH,
  MAX_VISITOR_ID_LENGTH,
  UNADDRESSABLE_SEGMENTS,
} from '../requests/fields.js';
import type { ColumnType, eventColumns } from './event-columns.js';

// Checks one imported event against the import format (docs/EVENT-FORMAT.md) and turns it into its stored row.
// Pure, so every importer applies exactly the same rules. JSON types are checked exactly: a number sent as a
// string, or the reverse, is a reason to reject the line, never converted. Nothing is altered on the way in: a
// value the store could not keep exactly (text with NUL or an unpaired surrogate, a number beyond a double, a
// property key that is not a plain name, an instant outside EVENT_DAYS) rejects the line with the field named.

/** The UTC days an event may fall on: the days a query range may name (shared/requests/fields.ts). */
export const EVENT_DAYS = { first: '1970-01-01', last: '2099-12-31' } as const;
const FIRST_INSTANT = Date.parse(`${EVENT_DAYS.first}T00:00:00Z`);
const END_INSTANT = Date.parse(`${EVENT_DAYS.last}T00:00:00Z`) + 86_400_000;

/**
 * The longest domain an event may name: its partition folder is `domain=<domain>`, and file systems name a folder
 * in at most 255 bytes (a domain is ASCII, so characters are bytes). Longer names are valid host names (up to 253).
 */
export const MAX_EVENT_DOMAIN_LENGTH = 255 - 'domain='.length;

/** Property keys: 1 to 100 characters, no control characters, no `:` (filters split `key:value` at the first). */
export const MAX_PROPERTY_KEY_LENGTH = 100;
const reservedKeys = new Set(['__proto__', 'constructor', 'prototype']);

type StoredValue<T extends ColumnType> = T extends 'timestamp'
  ? number
  : T extends 'string'
    ? string | undefined
    : T extends 'double' | 'bigint'
      ? number | undefined
      : boolean;

/**
 * A validated event's stored row: one value per stored column (`ts` in epoch milliseconds). A value not set is
 * `undefined`, so the row's JSON leaves its key out (JSON.stringify skips it) and readers given the columns read it
 * as NULL: a third of a typical row's bytes are such keys.
 */
export type StoredEvent = { [C in (typeof eventColumns)[number] as C[0]]: StoredValue<C[1]> };

/** A valid event's `domain` (its partition, kept apart from its row) and its stored row, or why it was rejected. */
export type CheckedEvent = { ok: true; domain: string; event: StoredEvent } | { ok: false; reason: string };

const eventTypes = ['pageview', 'event', 'revenue', 'auto'] as const;
type EventType = (typeof eventTypes)[number];

const devices = new Set(['desktop', 'mobile', 'tablet']);
const autoEventNames = new Set(['click', 'form_submit', 'exit_link']);
const knownTypes = new Set<string>(eventTypes);

const requiredStrings: Record<EventType, string[]> = {
  pageview: ['session_id', 'url_path'],
  event: ['session_id', 'event_name'],
  auto: ['session_id', 'event_name'],
  revenue: ['transaction_id', 'currency', 'revenue_event'],
};

// Optional attribution strings (referrer, utm_*, country, region, city, browser, os, device): null, absent and ""
// all mean "not set" and are stored as NULL.
const COUNTRY = /^[A-Z]{2}$/;
const CURRENCY = /^[A-Z]{3}$/;

class Rejection extends Error {}

function reject(reason: string): never {
  throw new Rejection(reason);
}

/** Validates one NDJSON line; `null` for a blank line, which is skipped without a report. */
export function checkEventLine(line: string): CheckedEvent | null {
  if (line.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { ok: false, reason: `not valid JSON (${(error as Error).message})` };
  }
  const checked = checkEvent(value);
  // JSON.parse has turned every number into a double already: a property or scroll depth written with more digits
  // than a double keeps would be stored changed. Only the line's text can tell, so lines with such values are read
  // again for those values' literals.
  if (checked.ok && hasNumberValues(value as Record<string, unknown>)) {
    const inexact = inexactStoredNumber(line);
    if (inexact !== undefined) {
      return {
        ok: false,
        reason:
          `${inexact.field} is the number ${inexact.literal.slice(0, 60)}, which has more digits than a double ` +
          `keeps (it would be stored as ${String(Number(inexact.literal))}): send it as a string`,
      };
    }
  }
  return checked;
}

function hasNumberValues(input: Record<string, unknown>): boolean {
  const properties = input.event_properties as Record<string, unknown> | undefined;
  return typeof input.scroll_depth === 'number' || Object.values(properties ?? {}).some((v) => typeof v === 'number');
}

/**
 * The stored number (a property value or `scroll_depth`) of a valid JSON event line whose literal a double does not
 * hold exactly, so that the double's shortest spelling names another number: `12345678901234567891`,
 * `9007199254740993`, `0.1000000000000000001`; `1.50`, `1e20` and `-0` are held. Where a key repeats, its last
 * literal counts, as in JSON.parse.
 */
export function inexactStoredNumber(line: string): { field: string; literal: string } | undefined {
  const literals = new Map<string, string>();
  for (const { path, literal } of numberLiterals(line)) {
    const stored =
      (path.length === 1 && path[0] === 'scroll_depth') || (path.length === 2 && path[0] === 'event_properties');
    if (stored) literals.set(path.join('.'), literal);
  }
  for (const [field, literal] of literals) {
    if (decimalValue(literal) !== decimalValue(String(Number(literal)))) return { field, literal };
  }
  return undefined;
}

/** Every number literal of a valid JSON text with the object keys that lead to it (array items add no key). */
function numberLiterals(json: string): { path: string[]; literal: string }[] {
  const found: { path: string[]; literal: string }[] = [];
  const literal = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  let i = 0;
  const space = () => {
    while (i < json.length && ' \t\n\r'.includes(json[i]!)) i++;
  };
  const string = (): string => {
    const start = i;
    for (i++; json[i] !== '"'; i++) if (json[i] === '\\') i++;
    i++;
    return JSON.parse(json.slice(start, i)) as string;
  };
  const value = (path: string[]): void => {
    space();
    const c = json[i]!;
    if (c === '{') {
      i++;
      space();
      while (json[i] !== '}') {
        space();
        const key = string();
        space();
        i++; // ':'
        value([...path, key]);
        space();
        if (json[i] === ',') i++;
        space();
      }
      i++;
    } else if (c === '[') {
      i++;
      space();
      while (json[i] !== ']') {
        value(path);
        space();
        if (json[i] === ',') i++;
        space();
      }
      i++;
    } else if (c === '"') {
      string();
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      literal.lastIndex = i;
      const text = literal.exec(json)![0];
      found.push({ path, literal: text });
      i += text.length;
    } else {
      i += c === 'f' ? 5 : 4; // true, false, null
    }
  };
  value([]);
  return found;
}

/** A decimal literal's value in one spelling: its significant digits and the power of ten of the last one. */
function decimalValue(text: string): string {
  const [, sign, whole, fraction = '', exponent = '0'] = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)!;
  const digits = (whole! + fraction).replace(/^0+/, '');
  if (digits === '') return '0';
  const trimmed = digits.replace(/0+$/, '');
  const power = Number(exponent) - fraction.length + (digits.length - trimmed.length);
  return `${sign}${trimmed}e${power}`;
}

export function checkEvent(value: unknown): CheckedEvent {
  try {
    return toStoredEvent(value);
  } catch (error) {
    if (error instanceof Rejection) return { ok: false, reason: error.message };
    throw error;
  }
}

function toStoredEvent(value: unknown): CheckedEvent & { ok: true } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) reject('an event must be a JSON object');
  const input = value as Record<string, unknown>;

  const type = requireString(input, 'type');
  if (!knownTypes.has(type)) reject(`unknown type "${type}" (expected ${eventTypes.join(', ')})`);
  const eventType = type as EventType;

  const domain = requireString(input, 'domain');
  if (!validDomain(domain)) reject(`domain "${domain}" must be a lower-case domain name`);
  if (domain.length > MAX_EVENT_DOMAIN_LENGTH)
    reject(`domain must be at most ${MAX_EVENT_DOMAIN_LENGTH} characters (the store names a folder after it)`);
  const ts = parseTimestamp(requireString(input, 'timestamp'));
  const visitorId = requireString(input, 'visitor_id');
  if (visitorId.length > MAX_VISITOR_ID_LENGTH)
    reject(`visitor_id must be at most ${MAX_VISITOR_ID_LENGTH} characters (the API looks a visitor up by it)`);
  for (const name of requiredStrings[eventType]) requireString(input, name);

  // Read one by one in a fixed order, so the first bad one is the one reported.
  const referrer = optionalString(input, 'referrer');
  const utmSource = optionalDimension(input, 'utm_source');
  const utmMedium = optionalDimension(input, 'utm_medium');
  const utmCampaign = optionalDimension(input, 'utm_campaign');
  const utmContent = optionalDimension(input, 'utm_content');
  const utmTerm = optionalDimension(input, 'utm_term');
  const country = optionalString(input, 'country');
  const region = optionalDimension(input, 'region');
  const city = optionalDimension(input, 'city');
  const browser = optionalDimension(input, 'browser');
  const os = optionalDimension(input, 'os');
  const device = optionalString(input, 'device');
  if (country !== undefined && !COUNTRY.test(country))
    reject('country must be an upper-case ISO 3166-1 alpha-2 code, e.g. "US"');
  if (device !== undefined && !devices.has(device)) reject(`device must be one of ${[...devices].join(', ')}`);

  const urlPath = optionalString(input, 'url_path');
  if (urlPath !== undefined && !urlPath.startsWith('/')) reject('url_path must be a path starting with "/"');

  const eventName = optionalString(input, 'event_name');
  if (
    eventName !== undefined &&
    (eventName.length > MAX_PATH_SEGMENT_LENGTH || UNADDRESSABLE_SEGMENTS.has(eventName))
  ) {
    reject(
      `event_name must be at most ${MAX_PATH_SEGMENT_LENGTH} characters and not "." or ".." (the API names an event in a URL path)`,
    );
  }
  if (eventType === 'auto' && !autoEventNames.has(eventName!))
    reject(`an auto event_name must be one of ${[...autoEventNames].join(', ')}`);
  const properties = eventProperties(field(input, 'event_properties'));
  if (eventType === 'auto' && eventName === 'exit_link' && typeof properties?.url !== 'string') {
    reject('an exit_link event needs event_properties.url (the link URL)');
  }

  const scrollDepth = field(input, 'scroll_depth');
  if (scrollDepth !== undefined) {
    if (typeof scrollDepth !== 'number') reject('scroll_depth must be a number');
    if (scrollDepth < 0 || scrollDepth > 100) reject('scroll_depth must be between 0 and 100');
    if (eventType !== 'pageview') reject('scroll_depth is only allowed on pageview rows');
  }

  const amount = field(input, 'amount_cents');
  if (eventType === 'revenue' && amount === undefined) reject('missing required field amount_cents');
  if (amount !== undefined && !(typeof amount === 'number' && Number.isSafeInteger(amount)))
    reject('amount_cents must be an integer number of cents');

  const currency = optionalString(input, 'currency');
  if (currency !== undefined && !CURRENCY.test(currency))
    reject('currency must be an upper-case ISO 4217 code, e.g. "USD"');

  const isDev = field(input, 'is_dev');
  if (isDev !== undefined && typeof isDev !== 'boolean') reject('is_dev must be true or false');

  const event: StoredEvent = {
    ts,
    type,
    visitor_id: visitorId,
    // Server-side revenue rows belong to no session; '' (not NULL) keeps "no session" one value for queries.
    session_id: optionalString(input, 'session_id') ?? '',
    url_path: urlPath,
    referrer,
    referrer_domain: referrerDomain(referrer),
    utm_source: utmSource,
    utm_medium: utmMedium,
    utm_campaign: utmCampaign,
    utm_content: utmContent,
    utm_term: utmTerm,
    country,
    region,
    city,
    browser,
    os,
    device,
    scroll_depth: scrollDepth as number | undefined,
    event_name: eventName,
    event_properties: properties ? JSON.stringify(properties) : undefined,
    transaction_id: optionalString(input, 'transaction_id'),
    amount_cents: amount as number | undefined,
    currency,
    revenue_event: optionalString(input, 'revenue_event'),
    is_dev: isDev ?? false,
  };
  return { ok: true, domain, event };
}

/** A field's value, null read as absent. */
function field(input: Record<string, unknown>, name: string): unknown {
  return input[name] === null ? undefined : input[name];
}

// An import names few domains and referrers many times over: each distinct value is checked or parsed once, in
// bounded caches (emptied when full), so the rules stay those of domainSchema and the URL parser.
const CACHE_LIMIT = 10_000;
const domainsChecked = new Map<string, boolean>();
const referrerHosts = new Map<string, string>();

function validDomain(domain: string): boolean {
  let valid = domainsChecked.get(domain);
  if (valid === undefined) {
    if (domainsChecked.size >= CACHE_LIMIT) domainsChecked.clear();
    domainsChecked.set(domain, (valid = domainSchema.safeParse(domain).success));
  }
  return valid;
}

function requireString(input: Record<string, unknown>, name: string): string {
  const value = input[name];
  if (value === undefined || value === null) reject(`missing required field ${name}`);
  if (typeof value !== 'string') reject(`${name} must be a string`);
  if (value === '') reject(`${name} must not be empty`);
  return storableText(value, name);
}

function optionalString(input: Record<string, unknown>, name: string): string | undefined {
  const value = input[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') reject(`${name} must be a string or null`);
  return storableText(value, name);
}

/**
 * A dimension's text: as optionalString, and the literal `(not set)` (what the API shows for, and filters on as, a
 * missing value; what analytics exports write for one) is not set either, so it has one meaning everywhere.
 */
function optionalDimension(input: Record<string, unknown>, name: string): string | undefined {
  const value = optionalString(input, name);
  return value === NOT_SET ? undefined : value;
}
const NOT_SET = '(not set)';

function isControlOrColon(char: string): boolean {
  const code = char.codePointAt(0)!;
  return code < 0x20 || code === 0x7f || char === ':';
}

/** Text the store keeps exactly: well-formed Unicode (so valid UTF-8 once written) without NUL. */
function storableText(value: string, name: string): string {
  if (!value.isWellFormed()) reject(`${name} must be valid Unicode (it holds an unpaired surrogate)`);
  if (value.includes('\u0000')) reject(`${name} must not contain NUL characters`);
  return value;
}

/** Flat properties, every value kept as its text so the stored JSON is a map of strings. */
function eventProperties(value: unknown): Record<string, string> | null {
  if (value === undefined) return null;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    reject('event_properties must be a JSON object');
  const out: Record<string, string> = Object.create(null);
  for (const [key, item] of Object.entries(value)) {
    const shown = JSON.stringify(key.slice(0, 40));
    if (
      key === '' ||
      key.length > MAX_PROPERTY_KEY_LENGTH ||
      [...key].some(isControlOrColon) ||
      reservedKeys.has(key) ||
      UNADDRESSABLE_SEGMENTS.has(key)
    ) {
      reject(
        `event_properties key ${shown} must be a plain name: 1 to ${MAX_PROPERTY_KEY_LENGTH} characters, no ":" or control characters, not ".", "..", __proto__, constructor or prototype`,
      );
    }
    storableText(key, `event_properties key ${shown}`);
    if (typeof item === 'number' && !Number.isFinite(item))
      reject(`event_properties.${key} must be a finite number (a double)`);
    if (typeof item !== 'string' && typeof item !== 'number' && typeof item !== 'boolean') {
      reject(`event_properties.${key} must be a string, number or boolean`);
    }
    out[key] = typeof item === 'string' ? storableText(item, `event_properties.${key}`) : String(item);
  }
  return out;
}

// Extended ISO 8601: seconds and fraction optional, a zone designator required (`Z`, `±hh`, `±hh:mm`, `±hhmm`).
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:Z|([+-])(\d{2})(?::?(\d{2}))?)$/;

/** An ISO 8601 instant with `Z` or an offset, as epoch milliseconds; finer fractions are truncated. */
export function parseTimestamp(text: string): number {
  const common = commonFormInstant(text);
  if (common !== undefined) return common;
  const match = TIMESTAMP.exec(text);
  if (!match)
    reject(`timestamp "${text}" must be an ISO 8601 instant with Z or an offset, e.g. 2026-03-01T14:05:09.120Z`);
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  const hour = Number(match[4]);
  const minute = Number(match[5]);
  const second = Number(match[6] ?? 0);
  const offsetHours = Number(match[9] ?? 0);
  const offsetMinutes = Number(match[10] ?? 0);
  // Checked before Date.UTC, which reads years 0-99 as 1900-1999.
  if (year < 1969 || year > 2100) rejectOutside(text);
  const fraction = match[7];
  const millis =
    fraction === undefined ? 0 : Number(fraction.length >= 3 ? fraction.slice(0, 3) : fraction.padEnd(3, '0'));
  const real =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    hour < 24 &&
    minute < 60 &&
    second < 60 &&
    offsetHours < 24 &&
    offsetMinutes < 60;
  if (!real) reject(`timestamp "${text}" is not a real date and time`);
  const instant =
    Date.UTC(year, month - 1, day, hour, minute, second, millis) -
    (match[8] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  if (instant < FIRST_INSTANT || instant >= END_INSTANT) rejectOutside(text);
  return instant;
}

/**
 * The instant of `YYYY-MM-DDTHH:MM:SS.mmmZ`, the form most collectors write, read digit by digit; undefined for any
 * other text and for any value the full rules would refuse, which then decide.
 */
function commonFormInstant(text: string): number | undefined {
  if (
    text.length !== 24 ||
    text.charCodeAt(4) !== 0x2d ||
    text.charCodeAt(7) !== 0x2d ||
    text.charCodeAt(10) !== 0x54 ||
    text.charCodeAt(13) !== 0x3a ||
    text.charCodeAt(16) !== 0x3a ||
    text.charCodeAt(19) !== 0x2e ||
    text.charCodeAt(23) !== 0x5a
  ) {
    return undefined;
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  const millis = digits(text, 20, 3);
  if ((year | month | day | hour | minute | second | millis) < 0) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59)
    return undefined;
  const instant = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  // Date.UTC reads the years 0-99 as 1900-1999: those are left to the full rules, like instants outside EVENT_DAYS.
  return year < 100 || instant < FIRST_INSTANT || instant >= END_INSTANT ? undefined : instant;
}

/** The number written by `count` ASCII digits of `text` from `from`, or -1 if any is not one. */
function digits(text: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

function rejectOutside(text: string): never {
  reject(
    `timestamp "${text}" lies outside ${EVENT_DAYS.first} to ${EVENT_DAYS.last} (UTC), the days the API can query`,
  );
}

/** Days in a month of the proleptic Gregorian calendar (month 1-12). */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Host of the referrer URL, lower case, without a leading `www.` or the root's trailing dot (`WWW.Example.COM.` is
 * `example.com`); '' for direct traffic or an unparseable URL.
 */
export function referrerDomain(referrer: string | undefined): string {
  if (referrer === undefined) return '';
  let host = referrerHosts.get(referrer);
  if (host === undefined) {
    if (referrerHosts.size >= CACHE_LIMIT) referrerHosts.clear();
    referrerHosts.set(referrer, (host = hostOf(referrer)));
  }
  return host;
}

function hostOf(referrer: string): string {
  try {
    return siteOfHost(new URL(referrer).hostname);
  } catch {
    return '';
  }
}

/** A host as a site: lower case, without the root's trailing dot or a leading `www.` (the collector's domains too). */
export function siteOfHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^www\./, '');
}
