import { useState } from 'preact/hooks';
import { answer, type Api, type Filter, type TimelineItem } from './api';
import { formatCents, formatCount, formatDuration } from './format';
import { apiRange, type ViewState } from './state';
import { useAnswer } from './use-answer';
import { NotLoaded } from './problems';

// Journeys: the visitors of the range who pass the view's filters (POST /v1/journeys/list), and one visitor's
// journey: all-time stats, weekly activity and the timeline of the range.

type SortBy = 'last_seen' | 'first_seen' | 'pageviews' | 'sessions' | 'revenue' | 'latest_revenue';

/** The journeys list's visitor conditions the toolbar sets (revenue in currency units here, cents on the wire). */
interface Bounds {
  pageviews_gt?: number;
  sessions_gt?: number;
  revenue_gt?: number;
  has_revenue?: boolean;
  first_purchase?: boolean;
}

interface Props {
  api: Api;
  domain: string;
  state: ViewState;
  openVisitor: (visitor: string | undefined) => void;
}

const PAGE = 25;

/** The visitors list's columns: `wide` ones are left out on a phone (styles.css), `number` ones align right. */
const listColumns: [string, 'wide' | 'number' | undefined][] = [
  ['Visitor', undefined],
  ['Country', 'wide'],
  ['Device', 'wide'],
  ['Entry page', 'wide'],
  ['Sessions', 'number'],
  ['Pageviews', 'number'],
  ['Revenue', 'number'],
  ['Last seen', 'wide'],
];

export function Journeys({ api, domain, state, openVisitor }: Props) {
  const [sortBy, setSortBy] = useState<SortBy>('last_seen');
  const [bounds, setBounds] = useState<Bounds>({});
  const [offset, setOffset] = useState(0);
  const bound = (name: 'pageviews_gt' | 'sessions_gt' | 'revenue_gt') => ({
    value: bounds[name] ?? '',
    onChange: (e: Event) => {
      const text = (e.currentTarget as HTMLInputElement).value;
      const next = { ...bounds };
      if (text === '') delete next[name];
      else next[name] = name === 'revenue_gt' ? Math.round(Number(text) * 100) / 100 : Math.trunc(Number(text));
      setBounds(next);
      setOffset(0);
    },
  });
  const flag = (name: 'has_revenue' | 'first_purchase') => ({
    checked: bounds[name] ?? false,
    onChange: (e: Event) => {
      const next = { ...bounds };
      if ((e.currentTarget as HTMLInputElement).checked) next[name] = true;
      else delete next[name];
      setBounds(next);
      setOffset(0);
    },
  });
  // The journeys list takes the row and visitor filters the query does, but not `exit_link` or the session pages.
  const listed = (f: Filter) => f[0] !== 'exit_link' && f[0] !== 'entry_page' && f[0] !== 'exit_page';
  const filters = state.filters.filter(listed);
  const ignored = state.filters.filter((f) => !listed(f));
  const [list] = useAnswer(
    () =>
      answer(
        api.POST('/v1/journeys/list', {
          body: {
            domain,
            date_range: apiRange(state),
            timezone: state.timezone,
            filters: filters as never,
            sort_by: sortBy,
            limit: PAGE,
            offset,
            ...bounds,
            // Revenue is entered in the currency's units and sent in cents.
            ...(bounds.revenue_gt === undefined ? {} : { revenue_gt: Math.round(bounds.revenue_gt * 100) }),
          },
        }),
      ),
    [JSON.stringify([domain, state.range, state.timezone, filters, sortBy, bounds, offset])],
  );
  if (state.visitor)
    return (
      <VisitorJourney
        api={api}
        domain={domain}
        state={state}
        visitor={state.visitor}
        close={() => openVisitor(undefined)}
      />
    );
  return (
    <main class="journeys">
      <section class="card" aria-label="Visitors">
        <div class="toolbar">
          <h2>
            Visitors {list.state === 'done' && <span class="muted">({formatCount(list.data.pagination.total)})</span>}
          </h2>
          <label>
            Sort by{' '}
            <select value={sortBy} onChange={(e) => (setSortBy(e.currentTarget.value as SortBy), setOffset(0))}>
              <option value="last_seen">last seen</option>
              <option value="first_seen">first seen</option>
              <option value="pageviews">pageviews</option>
              <option value="sessions">sessions</option>
              <option value="revenue">revenue</option>
              <option value="latest_revenue">latest revenue</option>
            </select>
          </label>
          <label>
            Pageviews over <input type="number" min="0" class="bound" {...bound('pageviews_gt')} />
          </label>
          <label>
            Sessions over <input type="number" min="0" class="bound" {...bound('sessions_gt')} />
          </label>
          <label>
            Revenue over <input type="number" min="0" step="0.01" class="bound" {...bound('revenue_gt')} />
          </label>
          <label>
            <input type="checkbox" {...flag('has_revenue')} /> with revenue
          </label>
          <label>
            <input type="checkbox" {...flag('first_purchase')} /> first purchase in range
          </label>
        </div>
        <p class="muted counted">
          Every visitor with a row in the range (a pageview, a custom event or a payment) that passes the filters; the
          overview&rsquo;s Visitors counts those with a pageview, so a visitor with only a payment (a renewal, a
          server-side sale) is counted here and not there, and shows no pages.
        </p>
        {state.range === 'realtime' && (
          <p class="muted realtime-note">Realtime shows today here: the journeys list takes whole days.</p>
        )}
        {ignored.length > 0 && (
          <p class="muted ignored-filters">
            Not applied here (the journeys list has no such filter): {ignored.map((f) => `${f[0]} ${f[2]}`).join(', ')}.
          </p>
        )}
        {list.state === 'loading' && <p class="muted">Loading…</p>}
        {list.state === 'failed' && <NotLoaded />}
        {list.state === 'done' && (
          <>
            <div class="scroll">
              <table>
                <thead>
                  <tr>
                    {listColumns.map(([name, kind]) => (
                      <th key={name} scope="col" class={kind}>
                        {name}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {list.data.data.map((v) => (
                    <tr key={v.visitor_id}>
                      <td>
                        <button
                          type="button"
                          class="row-filter visitor-id"
                          title={v.visitor_id}
                          onClick={() => openVisitor(v.visitor_id)}
                        >
                          {v.visitor_id}
                        </button>
                      </td>
                      <td class="wide">{v.country ?? '—'}</td>
                      <td class="wide">{v.device ?? '—'}</td>
                      <td class="wide">{v.entry_page ?? '—'}</td>
                      <td class="number">{formatCount(v.session_count)}</td>
                      <td class="number">{formatCount(v.pageview_count)}</td>
                      <td class="number">{formatCents(v.total_revenue_cents)}</td>
                      <td class="wide">{v.last_seen}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <div class="pager">
              <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
                Previous
              </button>
              <span class="muted">
                {list.data.data.length ? `${offset + 1}–${offset + list.data.data.length}` : '0'} of{' '}
                {formatCount(list.data.pagination.total)}
              </span>
              <button type="button" disabled={!list.data.pagination.has_more} onClick={() => setOffset(offset + PAGE)}>
                Next
              </button>
            </div>
          </>
        )}
      </section>
    </main>
  );
}

const days = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

function VisitorJourney({
  api,
  domain,
  state,
  visitor,
  close,
}: {
  api: Api;
  domain: string;
  state: ViewState;
  visitor: string;
  close: () => void;
}) {
  // Every time on the page in the view's zone (stats and activity take it as an extension of the contract).
  const [stats] = useAnswer(
    () => answer(api.POST('/v1/journeys/stats', { body: { domain, visitor_id: visitor, timezone: state.timezone } })),
    [domain, visitor, state.timezone],
  );
  const [activity] = useAnswer(
    () =>
      answer(api.POST('/v1/journeys/activity', { body: { domain, visitor_id: visitor, timezone: state.timezone } })),
    [domain, visitor, state.timezone],
  );
  const [timeline] = useAnswer(
    () =>
      answer(
        api.POST('/v1/journeys/timeline', {
          body: { domain, visitor_id: visitor, date_range: apiRange(state), timezone: state.timezone, limit: 200 },
        }),
      ),
    [domain, visitor, JSON.stringify(state.range), state.timezone],
  );
  const cells = new Map(
    activity.state === 'done' ? activity.data.data.map((b) => [`${b.day_of_week}-${b.hour_of_day}`, b.pageviews]) : [],
  );
  const busiest = Math.max(1, ...cells.values());
  return (
    <main class="journey">
      <button type="button" class="link back" onClick={close}>
        ← All visitors
      </button>
      <h2>
        Visitor <code>{visitor}</code>
      </h2>
      <section class="card" aria-label="Visitor stats">
        {stats.state === 'loading' && <p class="muted">Loading…</p>}
        {stats.state === 'failed' && <NotLoaded />}
        {stats.state === 'done' && (
          <dl class="facts">
            <Fact name="First seen" value={stats.data.data.first_seen} />
            <Fact name="Last seen" value={stats.data.data.last_seen} />
            <Fact name="Sessions" value={formatCount(stats.data.data.total_sessions)} />
            <Fact name="Pageviews" value={formatCount(stats.data.data.total_pageviews)} />
            <Fact name="Events" value={formatCount(stats.data.data.total_events)} />
            <Fact name="Revenue" value={formatCents(stats.data.data.total_revenue_cents)} />
            <Fact name="Avg. visit" value={formatDuration(stats.data.data.avg_session_duration_seconds)} />
            <Fact name="Source" value={stats.data.data.source ?? '—'} />
            <Fact name="Entry page" value={stats.data.data.entry_page ?? '—'} />
            <Fact
              name="Location"
              value={[stats.data.data.city, stats.data.data.country].filter(Boolean).join(', ') || '—'}
            />
            <Fact
              name="Device"
              value={
                [stats.data.data.device, stats.data.data.browser, stats.data.data.os].filter(Boolean).join(' · ') || '—'
              }
            />
          </dl>
        )}
      </section>
      <section class="card" aria-label={`Activity by weekday and hour (${state.timezone})`}>
        <h3>Activity by weekday and hour ({state.timezone})</h3>
        <div class="heatmap" role="table">
          {days.map((day, d) => (
            <div class="heat-row" role="row" key={day}>
              <span class="heat-label" role="rowheader">
                {day}
              </span>
              {Array.from({ length: 24 }, (_, h) => {
                const views = cells.get(`${d + 1}-${h}`) ?? 0;
                return (
                  <span
                    key={h}
                    role="cell"
                    class="heat-cell"
                    title={`${day} ${h}:00 ${state.timezone}: ${views} pageviews`}
                    style={{ opacity: views ? 0.15 + (0.85 * views) / busiest : 0.05 }}
                  />
                );
              })}
            </div>
          ))}
        </div>
      </section>
      <section class="card" aria-label="Timeline">
        <h3>Timeline</h3>
        {timeline.state === 'loading' && <p class="muted">Loading…</p>}
        {timeline.state === 'failed' && <NotLoaded />}
        {timeline.state === 'done' && (
          <ol class="timeline">
            {timeline.data.data.map((item, i) => (
              <li key={i} class={`item ${item.type}`}>
                <time>{item.timestamp}</time> <TimelineText item={item} />
              </li>
            ))}
          </ol>
        )}
      </section>
    </main>
  );
}

function Fact({ name, value }: { name: string; value: string }) {
  return (
    <div>
      <dt>{name}</dt>
      <dd>{value}</dd>
    </div>
  );
}

function TimelineText({ item }: { item: TimelineItem }) {
  switch (item.type) {
    case 'pageview':
      return (
        <span>
          Viewed <strong>{item.url_path}</strong>
          {item.is_entry_page === 1 && <span class="muted"> · entered from {item.referrer ?? 'direct'}</span>}
        </span>
      );
    case 'event':
    case 'auto':
      return (
        <span>
          {item.type === 'event' ? 'Event' : 'Auto event'} <strong>{item.event_name}</strong>
        </span>
      );
    case 'revenue':
      return (
        <span>
          {item.revenue_event} <strong>{formatCents(item.amount_cents, item.currency ?? undefined)}</strong>
        </span>
      );
  }
}
