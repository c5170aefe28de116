import { useState } from 'preact/hooks';
import { answer, type Api } from './api.js';
import { formatCount } from './format.js';

// "Add your site": the script tag for this site's pages, with the tracker's options, and a check that events arrive
// (docs/COLLECTING.md). The script is served beside this dashboard (/js/script.js) and sends to this API's collector.

const options = [
  ['outbound-links', 'Count clicks on links to other sites (“Outbound Link: Click”)'],
  ['file-downloads', 'Count file downloads (“File Download”)'],
  ['hash', 'The site routes pages by the URL’s #fragment'],
  ['respect-dnt', 'Send nothing from browsers that ask not to be tracked (Do Not Track)'],
] as const;

export function Install({ api, apiUrl, domain }: { api: Api; apiUrl: string; domain: string }) {
  const [chosen, setChosen] = useState<string[]>([]);
  const [copied, setCopied] = useState('');
  const [check, setCheck] = useState('');
  const scriptUrl = new URL('js/script.js', location.href.split('#')[0]).href;
  const endpoint = `${(apiUrl || location.origin).replace(/\/+$/, '')}/api/event`;
  const attributes = [
    `data-domain="${escape(domain)}"`,
    `data-api="${escape(endpoint)}"`,
    ...chosen.map((o) => `data-${o}`),
  ].join(' ');
  const tag = `<script defer ${attributes} src="${escape(scriptUrl)}"></script>`;

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(tag);
      setCopied('Copied.');
    } catch {
      setCopied('Select the text and copy it.');
    }
  };
  const verify = async () => {
    setCheck('Checking…');
    try {
      const result = await answer(
        api.POST('/v1/query', { body: { domain, metrics: ['pageviews'], date_range: '30m' } }),
      );
      const pageviews = Number(result.data[0]?.metrics.pageviews ?? 0);
      setCheck(
        pageviews > 0
          ? `${formatCount(pageviews)} pageviews in the last 30 minutes: the script works.`
          : 'No pageviews in the last 30 minutes yet. Open a page of the site and check again in a minute ' +
              '(pages on localhost are dev traffic, which the dashboard does not count).',
      );
    } catch (error) {
      setCheck(`The check failed: ${(error as Error).message}`);
    }
  };

  return (
    <main class="install">
      <section class="card" aria-labelledby="install-title">
        <h2 id="install-title">Add {domain} to your site</h2>
        <p>
          Paste this tag into the <code>&lt;head&gt;</code> of every page. It sets no cookies, stores nothing in the
          browser, and weighs about 1 KB.
        </p>
        <fieldset>
          <legend>Options</legend>
          {options.map(([name, label]) => (
            <label key={name}>
              <input
                type="checkbox"
                checked={chosen.includes(name)}
                onChange={(e) =>
                  setChosen(
                    (e.currentTarget as HTMLInputElement).checked
                      ? [...chosen, name]
                      : chosen.filter((o) => o !== name),
                  )
                }
              />{' '}
              {label}
            </label>
          ))}
        </fieldset>
        <label for="install-tag">Script tag</label>
        <textarea id="install-tag" readOnly rows={3} value={tag} onFocus={(e) => e.currentTarget.select()} />
        <p>
          <button type="button" onClick={copy}>
            Copy
          </button>{' '}
          <span role="status">{copied}</span>
        </p>
        <h3>Custom events and revenue</h3>
        <p>Call the script's function from the page:</p>
        <pre>
          <code>
            {`plausible('Signup', { props: { plan: 'pro' } });\n` +
              `plausible('Purchase', { revenue: { amount: 29.99, currency: 'EUR' } });`}
          </code>
        </pre>
        <p class="muted">
          Pages on localhost are not counted unless the tag has <code>data-local</code>; they are then kept apart as dev
          traffic. Plausible's own script and integrations work too: point their endpoint at <code>{endpoint}</code>.
        </p>
        <p>
          <button type="button" onClick={verify}>
            Check installation
          </button>{' '}
          <span role="status">{check}</span>
        </p>
      </section>
    </main>
  );
}

/** An attribute value as HTML text: the domain and URLs are the user's own, but a quote must not end the value. */
function escape(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
}
