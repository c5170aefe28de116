// The tracker script sites embed (docs/COLLECTING.md, "The script"), served at /js/script.js:
//
//   <script defer data-domain="example.com" src="https://<api>/js/script.js"></script>
//
// It runs in the visitors' browsers, sets no cookie and touches no storage. It sends Plausible's event body to
// POST /api/event with navigator.sendBeacon (text/plain: no preflight, and it survives the page's unload): a pageview
// on load and on each history navigation, and what the page asks for through `window.plausible(name, options)`.
// Attributes: data-domain (default: the page's host), data-api (default: /api/event beside the script), and the
// optional data-outbound-links, data-file-downloads, data-hash (hash-based routing), data-respect-dnt (send nothing
// when the browser asks not to be tracked), data-local (count pages on localhost too).

interface Options {
  props?: Record<string, string | number | boolean>;
  revenue?: { amount: number | string; currency: string };
  callback?: () => void;
}
type Track = ((name: string, options?: Options) => void) & { q?: IArguments[] };

// A second copy of the script on a page does nothing: the first already counts its pages.
const loaded = (window as { plausible?: Track & { l?: boolean } }).plausible?.l;
const script = (document.currentScript ??
  document.querySelector('script[data-domain][src*="script.js"]')) as HTMLScriptElement | null;
if (!loaded && script) start(script);

function start(script: HTMLScriptElement) {
  const flag = (name: string) => script.hasAttribute(`data-${name}`);
  const domain = script.getAttribute('data-domain') || location.hostname.replace(/^www\./, '');
  const endpoint = script.getAttribute('data-api') || new URL('/api/event', script.src).href;
  const hashMode = flag('hash');
  const dnt =
    (navigator as Navigator & { doNotTrack?: string }).doNotTrack === '1' ||
    (window as { doNotTrack?: string }).doNotTrack === '1';
  const ignored =
    (flag('respect-dnt') && dnt) ||
    (!flag('local') &&
      (/^(localhost|.*\.localhost|127(\.\d+){3}|\[::1\])$/.test(location.hostname) || location.protocol === 'file:')) ||
    navigator.webdriver;

  const track: Track & { l?: boolean } = (name, given) => {
    const options = given ?? {};
    if (ignored) return options.callback?.();
    const body: Record<string, unknown> = { n: name, u: location.href, d: domain, r: document.referrer || null };
    if (options.props) body.p = options.props;
    if (options.revenue) body.$ = options.revenue;
    if (hashMode) body.h = 1;
    const text = JSON.stringify(body);
    if (!navigator.sendBeacon?.(endpoint, text))
      fetch(endpoint, { method: 'POST', body: text, keepalive: true, headers: { 'content-type': 'text/plain' } }).catch(
        () => {},
      );
    options.callback?.();
  };

  let lastPage: string | undefined;
  const pageview = () => {
    const page = location.pathname + (hashMode ? location.hash : '');
    if (page === lastPage) return;
    lastPage = page;
    track('pageview');
  };

  // Calls queued by the page before the script loaded (Plausible's snippet) run now, in order.
  const queued = (window as { plausible?: Track }).plausible?.q ?? [];
  track.l = true;
  (window as { plausible?: Track }).plausible = track;
  for (const call of queued) track(...(call as unknown as [string, Options?]));

  const pushState = history.pushState;
  history.pushState = function (...args: Parameters<History['pushState']>) {
    pushState.apply(this, args);
    pageview();
  };
  addEventListener('popstate', pageview);
  if (hashMode) addEventListener('hashchange', pageview);

  const downloads =
    /\.(pdf|xlsx?|docx?|txt|rtf|csv|exe|key|pps|pptx?|7z|pkg|rar|gz|zip|avi|mov|mp4|mpe?g|wmv|midi?|mp3|wav|wma|dmg)$/i;
  if (flag('outbound-links') || flag('file-downloads'))
    document.addEventListener('click', (event) => {
      const link = (event.target as Element | null)?.closest?.('a');
      if (!link?.href) return;
      let url: URL;
      try {
        url = new URL(link.href, location.href);
      } catch {
        return; // a link no URL can hold: nothing to count
      }
      if (flag('file-downloads') && downloads.test(url.pathname)) track('File Download', { props: { url: url.href } });
      else if (flag('outbound-links') && /^https?:$/.test(url.protocol) && url.host !== location.host)
        track('Outbound Link: Click', { props: { url: url.href } });
    });

  // A page the browser prerenders counts once it is shown.
  if ((document as Document & { prerendering?: boolean }).prerendering)
    document.addEventListener('prerenderingchange', pageview, { once: true });
  else pageview();
}
