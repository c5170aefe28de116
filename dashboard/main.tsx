import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { apiClient, type Api, type Filter } from './api';
import { FilterEditor, Segments } from './filter-editor';
import { leaveSharedView, ReadOnly, Share, takeSharedView } from './share';
import { Journeys } from './journeys';
import { Install } from './install';
import { Overview } from './overview';
import { ProblemBanner } from './problems';
import { Refresh } from './use-answer';
import { browserTimeZone, presets, readState, writeState, type Comparison, type Range, type ViewState } from './state';
import 'uplot/dist/uPlot.min.css';
import './styles.css';

// The dashboard (README, "Dashboard"): served at `/` by the local server, or from any static host against a deployed
// API (docs/DEPLOY.md, "Hosting the dashboard"). It holds no data of its own: every number is an API answer for the
// key pasted here, kept in this browser's localStorage. The local server offers its demo key on first start.

interface Settings {
  apiUrl: string;
  key: string;
  domain: string;
}

/** The key and domain in the address's fragment, removed from it (and from the history entry) once read. */
function takeOfferedKey(): { key: string; domain: string } | undefined {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const key = params.get('key');
  if (!key) return undefined;
  const domain = params.get('domain') ?? '';
  params.delete('key');
  params.delete('domain');
  history.replaceState(null, '', `${location.pathname}${location.search}${params.size ? `#${params.toString()}` : ''}`);
  return { key, domain };
}

/** How often realtime asks again. */
const REALTIME_REFRESH_MS = 60_000;

const stored = (): Settings =>
  JSON.parse(localStorage.getItem('analytics-dashboard') ?? 'null') ?? { apiUrl: '', key: '', domain: '' };

function App() {
  // A tab opened from a shared link reads with the link's key and writes nothing (share.tsx).
  const [shared] = useState(takeSharedView);
  const [own, setSettings] = useState<Settings>(stored);
  const settings: Settings = shared ? { apiUrl: shared.apiUrl, key: shared.key, domain: shared.domain } : own;
  const [state, setState] = useState<ViewState>(() => readState(location.hash));
  const [editing, setEditing] = useState(false);
  // Realtime asks every answer again each minute (the store's latency: docs/DECISIONS.md, "Dashboard").
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (state.range !== 'realtime') return;
    const timer = setInterval(() => setTick((t) => t + 1), REALTIME_REFRESH_MS);
    return () => clearInterval(timer);
  }, [state.range]);

  useEffect(() => {
    // A key offered by the link `npm start` prints (`#key=...&domain=...`): saved here, then taken out of the
    // address; also when the link is opened in a tab already showing the page (only the fragment changes).
    const takeOffer = () => {
      const offered = takeOfferedKey();
      if (offered) {
        save({ apiUrl: '', ...offered });
        setEditing(false);
      }
    };
    const onHash = () => {
      // A shared link pasted into an open tab: the tab becomes that shared view (share.tsx), from a fresh start.
      if (new URLSearchParams(location.hash.replace(/^#/, '')).has('share') && takeSharedView()) {
        location.reload();
        return;
      }
      takeOffer();
      setState(readState(location.hash));
    };
    takeOffer();
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  const save = (next: Settings) => {
    localStorage.setItem('analytics-dashboard', JSON.stringify(next));
    setSettings(next);
  };
  const go = (next: ViewState) => {
    location.hash = writeState(next);
  };
  const api = useMemo(
    () => apiClient(settings.apiUrl || location.origin, settings.key),
    [settings.apiUrl, settings.key],
  );
  const addFilter = (filter: Filter) => {
    if (!state.filters.some((f) => JSON.stringify(f) === JSON.stringify(filter)))
      go({ ...state, filters: [...state.filters, filter] });
  };
  const ready = settings.key && settings.domain && !editing;

  return (
    <>
      <header class="top">
        <h1>Analytics</h1>
        <nav aria-label="Views">
          <a
            href={writeState({ ...state, view: 'overview', visitor: undefined })}
            aria-current={state.view === 'overview' ? 'page' : undefined}
          >
            Overview
          </a>
          <a
            href={writeState({ ...state, view: 'journeys', visitor: undefined })}
            aria-current={state.view === 'journeys' ? 'page' : undefined}
          >
            Journeys
          </a>
          {!shared && (
            <a
              href={writeState({ ...state, view: 'install', visitor: undefined })}
              aria-current={state.view === 'install' ? 'page' : undefined}
            >
              Add your site
            </a>
          )}
        </nav>
        {ready && shared && (
          <span class="site">
            {settings.domain}, shared read-only{' '}
            <button type="button" class="link" onClick={leaveSharedView}>
              Leave
            </button>
          </span>
        )}
        {ready && !shared && (
          <button type="button" class="link site" onClick={() => setEditing(true)} title="Change the site, key or API">
            {settings.domain}
          </button>
        )}
      </header>
      {!ready ? (
        <Connect settings={settings} onSave={(s) => (save(s), setEditing(false))} />
      ) : (
        <>
          {state.view !== 'install' && (
            <Controls
              api={api}
              apiUrl={settings.apiUrl}
              domain={settings.domain}
              state={state}
              go={go}
              readOnly={shared !== null}
            />
          )}
          {/* A banner of its own per view and key: a problem of another view or key is not this one's. */}
          <ReadOnly.Provider value={shared !== null}>
            <Refresh.Provider value={tick}>
              <ProblemBanner key={`${state.view} ${settings.key} ${settings.domain}`}>
                {state.view === 'install' && !shared ? (
                  <Install api={api} apiUrl={settings.apiUrl} domain={settings.domain} />
                ) : state.view === 'overview' || state.view === 'install' ? (
                  <Overview api={api} domain={settings.domain} state={state} go={go} addFilter={addFilter} />
                ) : (
                  <Journeys
                    api={api}
                    domain={settings.domain}
                    state={state}
                    openVisitor={(visitor) => go({ ...state, visitor })}
                  />
                )}
              </ProblemBanner>
            </Refresh.Provider>
          </ReadOnly.Provider>
        </>
      )}
    </>
  );
}

function Connect({ settings, onSave }: { settings: Settings; onSave: (s: Settings) => void }) {
  const [draft, setDraft] = useState(settings);
  const field = (name: keyof Settings) => ({
    value: draft[name],
    onInput: (e: Event) => setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement).value.trim() }),
  });
  return (
    <main class="connect">
      <form
        class="card"
        onSubmit={(e) => {
          e.preventDefault();
          onSave(draft);
        }}
      >
        <h2>Connect to your analytics</h2>
        <label>
          Site (domain) <input required placeholder="shop.example.com" {...field('domain')} />
        </label>
        <label>
          API key <input required type="password" autoComplete="off" placeholder="aqk_…" {...field('key')} />
        </label>
        <label>
          API URL <input placeholder={`${location.origin} (this server)`} {...field('apiUrl')} />
        </label>
        <p class="muted">The key stays in this browser (localStorage) and is sent only to the API URL.</p>
        <button type="submit">Open dashboard</button>
      </form>
    </main>
  );
}

const zones = (() => {
  const all =
    (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  return [...new Set(['UTC', browserTimeZone(), ...all])];
})();

function Controls({
  api,
  apiUrl,
  domain,
  state,
  go,
  readOnly,
}: {
  api: Api;
  apiUrl: string;
  domain: string;
  state: ViewState;
  go: (s: ViewState) => void;
  readOnly: boolean;
}) {
  const custom = Array.isArray(state.range);
  const setRange = (range: Range) => go({ ...state, range });
  return (
    <section class="controls" aria-label="Range, time zone and filters">
      <label>
        Range{' '}
        <select
          name="range"
          value={custom ? 'custom' : (state.range as string)}
          onChange={(e) => {
            const value = e.currentTarget.value;
            const today = new Date().toISOString().slice(0, 10);
            setRange(
              value === 'custom'
                ? [new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10), today]
                : (value as Range),
            );
          }}
        >
          {presets.map((p) => (
            <option key={p.value} value={p.value}>
              {p.label}
            </option>
          ))}
          <option value="custom">Custom…</option>
        </select>
      </label>
      {custom && (
        <>
          <label>
            From{' '}
            <input
              type="date"
              value={(state.range as [string, string])[0]}
              max={(state.range as [string, string])[1]}
              onChange={(e) => setRange([e.currentTarget.value, (state.range as [string, string])[1]])}
            />
          </label>
          <label>
            To{' '}
            <input
              type="date"
              value={(state.range as [string, string])[1]}
              min={(state.range as [string, string])[0]}
              onChange={(e) => setRange([(state.range as [string, string])[0], e.currentTarget.value])}
            />
          </label>
        </>
      )}
      {state.view === 'overview' && (
        <label>
          Compare with{' '}
          <select
            name="compare"
            value={state.compare}
            onChange={(e) => go({ ...state, compare: e.currentTarget.value as Comparison })}
          >
            <option value="previous">the previous period</option>
            <option value="year">the same period a year before</option>
          </select>
        </label>
      )}
      <label>
        Time zone{' '}
        <select
          name="timezone"
          value={state.timezone}
          onChange={(e) => go({ ...state, timezone: e.currentTarget.value })}
        >
          {zones.map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
      </label>
      <ul class="filters" aria-label="Filters">
        {state.filters.map((f, i) => (
          <li key={JSON.stringify(f)} class="chip">
            <span>
              {f[0]} {f[1].replace('_', ' ')} <strong>{f[2]}</strong>
            </span>
            <button
              type="button"
              aria-label={`Remove filter ${f[0]} ${f[2]}`}
              onClick={() => go({ ...state, filters: state.filters.filter((_, j) => j !== i) })}
            >
              ×
            </button>
          </li>
        ))}
        {state.filters.length === 0 && <li class="muted">No filters: click a row or add one.</li>}
      </ul>
      <FilterEditor api={api} domain={domain} state={state} go={go} />
      <Segments key={domain} domain={domain} state={state} go={go} readOnly={readOnly} />
      {!readOnly && <Share api={api} apiUrl={apiUrl} domain={domain} state={state} />}
    </section>
  );
}

render(<App />, document.getElementById('app')!);
