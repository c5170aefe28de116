import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parseTrackedEvent, siteName, toCents } from '../../shared/collect/event-body.js';
import { attributionOf, isBotAgent, isLocalPage, pagePath, platformOf } from '../../shared/collect/enrichment.js';
import { placeOf } from '../../shared/collect/geo.js';
import { buildTracker } from '../../local/server/dashboard-page.js';
import { ValidationError } from '../../shared/errors.js';

// The collector's pure parts: Plausible's body read into an event, the amounts, the page's attribution, the user
// agent and the address database; and the tracker script's size.

const event = (body: Record<string, unknown>) => parseTrackedEvent(JSON.stringify(body));

describe("Plausible's event body", () => {
  it('reads the long and the short names alike', () => {
    const long = event({
      name: 'Signup',
      url: 'https://WWW.Shop.Example/a?x=1',
      domain: 'shop.example',
      referrer: 'https://news.example/',
      props: { plan: 'pro' },
      revenue: { amount: 1, currency: 'EUR' },
    });
    const short = event({
      n: 'Signup',
      u: 'https://WWW.Shop.Example/a?x=1',
      d: 'shop.example',
      r: 'https://news.example/',
      p: { plan: 'pro' },
      $: { amount: 1, currency: 'EUR' },
    });
    expect(short).toEqual(long);
    expect(long).toMatchObject({
      name: 'Signup',
      domains: ['shop.example'],
      revenue: { amountCents: 100, currency: 'EUR' },
    });
  });

  it("takes the URL's host as the site when no domain is given, and several sites from a comma list", () => {
    expect(event({ n: 'pageview', u: 'https://www.Shop.Example./x' }).domains).toEqual(['shop.example']);
    expect(event({ n: 'pageview', u: 'https://a.test/', d: 'a.test, B.test,a.test' }).domains).toEqual([
      'a.test',
      'b.test',
    ]);
    expect(siteName(' WWW.Example.COM. ')).toBe('example.com');
  });

  it('keeps string, number and boolean properties as text and drops what Plausible drops; props may be JSON text', () => {
    expect(
      event({ n: 'E', u: 'https://a.test/', p: { s: 'x', n: 1.5, b: false, e: '', z: null, l: [1], o: {} } }).props,
    ).toEqual({
      s: 'x',
      n: '1.5',
      b: 'false',
    });
    expect(event({ n: 'E', u: 'https://a.test/', m: '{"k":"v"}' }).props).toEqual({ k: 'v' });
  });

  it.each([
    ['{', 'not valid JSON'],
    ['[]', 'must be a JSON object'],
    [JSON.stringify({ u: 'https://a.test/' }), 'name'],
    [JSON.stringify({ n: 'pageview' }), 'url'],
    [JSON.stringify({ n: 'pageview', u: 'not a url' }), 'absolute URL'],
    [JSON.stringify({ n: 'pageview', u: 'javascript:alert(1)' }), 'javascript:'],
    [JSON.stringify({ n: ' ', u: 'https://a.test/' }), 'name'],
    [JSON.stringify({ n: 'E', u: 'https://a.test/', m: '[1]' }), 'props'],
    [JSON.stringify({ n: 'E', u: 'https://a.test/', p: { ['k'.repeat(101)]: 'v' } }), '100 characters'],
    [JSON.stringify({ n: 'E', u: 'https://a.test/', $: { amount: 'ten', currency: 'EUR' } }), '$.amount'],
    [JSON.stringify({ n: 'E', u: 'https://a.test/', $: { amount: 1, currency: 'EUR', extra: 1 } }), '$.extra'],
    [JSON.stringify({ n: 'E', u: 'https://a.test/', d: 'a_b.test' }), 'domain name'],
  ])('refuses %s with a 400 that names the field', (body, says) => {
    let thrown: unknown;
    try {
      parseTrackedEvent(body);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    expect((thrown as ValidationError).message).toContain(says);
  });

  it('turns amounts into hundredths exactly, rounding half away from zero', () => {
    expect(toCents('10.29')).toBe(1029);
    expect(toCents('10.295')).toBe(1030);
    expect(toCents('10.2949')).toBe(1029);
    expect(toCents('-3.005')).toBe(-301);
    expect(toCents(0.1 + 0.2)).toBe(30);
    expect(toCents(19.99)).toBe(1999);
    expect(toCents(5)).toBe(500);
    expect(toCents('-0.001')).toBe(0);
    expect(toCents('90071992547409.91')).toBe(9007199254740991);
    expect(() => toCents('90071992547409.92')).toThrow(/at most/);
    expect(() => toCents(1e21)).toThrow(/at most/);
    expect(() => toCents(Number.NaN)).toThrow(/finite/);
  });
});

describe('enrichment', () => {
  it("takes the path without its query, the fragment only in hash mode, and an external referrer's attribution", () => {
    const e = event({
      n: 'pageview',
      u: 'https://a.test/caf%C3%A9/?utm_medium=mail&ref=hn#/x',
      r: 'https://a.test/prev',
      h: 1,
    });
    expect(pagePath(e)).toBe('/café/#/x');
    expect(pagePath({ ...e, hashMode: false })).toBe('/café/');
    // The referrer is the site itself: no source; `ref` stands in for utm_source.
    expect(attributionOf(e)).toEqual({ utm_medium: 'mail', utm_source: 'hn' });
    expect(attributionOf(event({ n: 'pageview', u: 'https://a.test/', r: 'https://www.b.test/x' }))).toEqual({
      referrer: 'https://www.b.test/x',
    });
  });

  it('names browsers, systems and devices, and knows bots and pages on the developer’s machine', () => {
    expect(
      platformOf(
        'Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
      ),
    ).toEqual({ browser: 'Safari', os: 'iOS', device: 'tablet' });
    expect(platformOf('curl/8.0')).toEqual({});
    expect(isBotAgent('Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)')).toBe(true);
    expect(isBotAgent(undefined)).toBe(true);
    expect(isBotAgent('Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0')).toBe(false);
    expect(isLocalPage(new URL('http://127.0.0.1:8080/'))).toBe(true);
    expect(isLocalPage(new URL('http://app.localhost/'))).toBe(true);
    expect(isLocalPage(new URL('https://example.com/'))).toBe(false);
  });

  it('places addresses of both families from the shipped database, and private ones nowhere', () => {
    expect(placeOf('81.2.69.142')).toEqual({ country: 'GB', region: 'England', city: 'London' });
    expect(placeOf('2a02:26f0::1').country).toMatch(/^[A-Z]{2}$/);
    expect(placeOf('192.168.1.1')).toEqual({});
    expect(placeOf('not an address')).toEqual({});
  });
});

describe('the tracker script', () => {
  it('stays under 2 KB gzipped', async () => {
    const script = await buildTracker();
    expect(gzipSync(script).length).toBeLessThan(2048);
    expect(script).not.toMatch(/cookie|localStorage|sessionStorage/);
  });
});
