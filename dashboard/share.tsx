import { createContext } from 'preact';
import { useState } from 'preact/hooks';
import { useModal } from './modal';
import { useWrite, WriteProblem } from './problems';
import { answer, type Api } from './api';
import { writeState, type ViewState } from './state';
import { useAnswer } from './use-answer';

// Shared links (docs/DECISIONS.md, "Dashboard"): a read-only key made by the API for one link (POST
// /v1/shared-links), put in the link's fragment as `share=`; never the owner's key. A browser opening such a link
// keeps that key for the tab only (sessionStorage), leaves its own settings alone and shows the view read-only.

/** True in a tab opened from a shared link: nothing is offered that would write. */
export const ReadOnly = createContext(false);

const SHARED = 'analytics-shared';

export interface SharedView {
  key: string;
  domain: string;
  /** The API's address when it is not this page's server (a dashboard hosted apart: docs/DEPLOY.md). */
  apiUrl: string;
}

/** The shared key of this tab: taken out of the address (`#share=...&domain=...`) when offered, else kept. */
export function takeSharedView(): SharedView | null {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const key = params.get('share');
  const domain = params.get('domain');
  // A link without its site is no shared view: the tab stays the browser's own (and never saves this key).
  if (key && domain) {
    const view = { key, domain, apiUrl: params.get('api') ?? '' };
    sessionStorage.setItem(SHARED, JSON.stringify(view));
    params.delete('share');
    params.delete('domain');
    params.delete('api');
    history.replaceState(null, '', `${location.pathname}${location.search}#${params.toString()}`);
    return view;
  }
  try {
    return JSON.parse(sessionStorage.getItem(SHARED) ?? 'null') as SharedView | null;
  } catch {
    return null;
  }
}

export function leaveSharedView(): void {
  sessionStorage.removeItem(SHARED);
  location.reload();
}

/** The link for `state` with a shared key: the view's fragment plus the key, the site and the API's address. */
export function sharedLink(token: string, domain: string, apiUrl: string, state: ViewState): string {
  const params = new URLSearchParams(writeState({ ...state, visitor: undefined }).slice(1));
  params.set('share', token);
  params.set('domain', domain);
  if (apiUrl) params.set('api', apiUrl);
  return `${location.origin}${location.pathname}#${params.toString()}`;
}

/** **Share**: makes a read-only link to the view, and lists and revokes the site's links. */
export function Share({ api, apiUrl, domain, state }: { api: Api; apiUrl: string; domain: string; state: ViewState }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Share
      </button>
      {open && <ShareDialog api={api} apiUrl={apiUrl} domain={domain} state={state} onClose={() => setOpen(false)} />}
    </>
  );
}

function ShareDialog({
  api,
  apiUrl,
  domain,
  state,
  onClose,
}: {
  api: Api;
  apiUrl: string;
  domain: string;
  state: ViewState;
  onClose: () => void;
}) {
  const dialog = useModal();
  const [name, setName] = useState('Shared view');
  const [made, setMade] = useState<string | null>(null);
  const [problem, write] = useWrite();
  const [links, reload] = useAnswer(
    () => answer(api.GET('/v1/shared-links', { params: { query: { domain } } })).then((a) => a.data),
    [domain],
  );
  const create = (event: Event) => {
    event.preventDefault();
    return write(async () => {
      const link = await answer(api.POST('/v1/shared-links', { body: { domain, name } }));
      setMade(sharedLink(link.token, domain, apiUrl, state));
      reload();
    });
  };
  const revoke = (id: string) =>
    write(async () => {
      await answer(api.DELETE('/v1/shared-links/{id}', { params: { path: { id }, query: { domain } } }));
      reload();
    });
  return (
    <dialog ref={dialog} class="share" aria-labelledby="share-title" onClose={onClose}>
      <h2 id="share-title">Share this view</h2>
      <p class="muted">
        A link with a key of its own that may only read {domain}: anyone with the link sees the dashboard, read-only,
        until you revoke it. Your key is never in it.
      </p>
      <form onSubmit={create} class="inline">
        <label>
          Name{' '}
          <input
            name="link-name"
            required
            maxLength={120}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Create link</button>
      </form>
      {made && (
        <label class="made-link">
          Link (shown once) <input name="shared-link" readOnly value={made} onFocus={(e) => e.currentTarget.select()} />
        </label>
      )}
      <WriteProblem problem={problem} />
      <h3>Links of {domain}</h3>
      {links.state === 'failed' && <p class="error">{links.message}</p>}
      {links.state === 'done' && links.data.length === 0 && <p class="muted">None yet.</p>}
      {links.state === 'done' && links.data.length > 0 && (
        <ul class="links">
          {links.data.map((l) => (
            <li key={l.id}>
              {l.name} <span class="muted">({l.created_at.slice(0, 10)})</span>{' '}
              <button type="button" class="link" aria-label={`Revoke ${l.name}`} onClick={() => revoke(l.id)}>
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
      <div class="dialog-buttons">
        <button type="button" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </div>
    </dialog>
  );
}
