import Bowser from 'bowser';
import { isbot } from 'isbot';
import type { TrackedEvent } from './event-body.js';
import { siteName } from './event-body.js';

// What a tracked request says about its visitor beyond the body: browser, OS and device from the User-Agent header
// (bowser, MIT), whether it is a bot (isbot, Unlicense: its list of crawler and tool patterns), and the page's path,
// its referrer when external, and its UTM fields from the URL. Nothing here is stored but these values.

export interface Platform {
  browser?: string;
  os?: string;
  device?: 'desktop' | 'mobile' | 'tablet';
}

/** A client this service does not count: a known bot or crawler, or a request without a User-Agent. */
export function isBotAgent(userAgent: string | undefined): boolean {
  return !userAgent?.trim() || isbot(userAgent);
}

const devices = new Set(['desktop', 'mobile', 'tablet']);

export function platformOf(userAgent: string): Platform {
  const parsed = Bowser.parse(userAgent);
  const device = parsed.platform.type;
  return {
    ...(parsed.browser.name ? { browser: parsed.browser.name } : {}),
    ...(parsed.os.name ? { os: parsed.os.name } : {}),
    ...(device && devices.has(device) ? { device: device as Platform['device'] } : {}),
  };
}

/** The session's attribution, taken from the event that starts it. */
export interface Attribution {
  referrer?: string;
  utm_source?: string;
  utm_medium?: string;
  utm_campaign?: string;
  utm_content?: string;
  utm_term?: string;
}

export const UTM_FIELDS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term'] as const;

/**
 * The referrer when it is another site's (a link from the site itself is no source, as in Plausible), and the UTM
 * fields of the page URL; `utm_source` falls back to `source` and then `ref`, the other tags Plausible reads.
 */
export function attributionOf(event: TrackedEvent): Attribution {
  const attribution: Attribution = {};
  const referrer = event.referrer && URL.parse(event.referrer);
  if (referrer && referrer.hostname && siteName(referrer.hostname) !== siteName(event.url.hostname))
    attribution.referrer = event.referrer;
  const query = event.url.searchParams;
  for (const field of UTM_FIELDS) {
    const value = (
      field === 'utm_source' ? (query.get(field) ?? query.get('source') ?? query.get('ref')) : query.get(field)
    )?.trim();
    if (value) attribution[field] = value;
  }
  return attribution;
}

/** The page's path: decoded, without the query; with the fragment in hash-routing mode (`#/settings`). */
export function pagePath(event: TrackedEvent): string {
  let path = decodeSafely(event.url.pathname || '/').trimEnd() || '/';
  if (!path.startsWith('/')) path = `/${path}`;
  if (event.hashMode && event.url.hash.length > 1) path += `#${decodeSafely(event.url.hash.slice(1))}`;
  return path;
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Traffic from the developer's own machine, kept apart as `is_dev` (docs/EVENT-FORMAT.md). */
export function isLocalPage(url: URL): boolean {
  const host = url.hostname.toLowerCase();
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    /^127(\.\d{1,3}){3}$/.test(host) ||
    url.protocol === 'file:'
  );
}
