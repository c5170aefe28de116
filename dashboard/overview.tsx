import { useContext, useMemo, useState } from 'preact/hooks';
import { answer, type Annotation, type Api, type Filter, type QueryBody, type QueryRow } from './api';
import { TrafficChart, type DailyPoint, type Interval } from './chart';
import { change, formatCount, formatMetric, metricLabels, type MetricName } from './format';
import { comparedPeriod, hourIn, minuteIn, queryRange, todayIn, type ChartInterval, type ViewState } from './state';
import { useAnswer, type Answer } from './use-answer';
import { NotLoaded, useWrite, WriteProblem } from './problems';
import { batchedQueries } from './query-batches';
import { cards, type ListCard, type ListTab, type Query } from './lists';
import { download, listBody, viewZip } from './export';
import { FullList } from './full-list';
import { Goals } from './goals';
import { ReadOnly } from './share';
import { WorldMap } from './world-map';

// The overview: totals against the previous period, the daily chart with its annotations, and the top lists.
// Every number is one answer of POST /v1/query for the range, time zone and filters of the view (an event's
// properties: of the custom-event endpoints, which take UTC days and no filters); clicking a row adds it to the
// filters.

interface Props {
  api: Api;
  domain: string;
  state: ViewState;
  /** Moves the view to another state (the chart's interval). */
  go: (state: ViewState) => void;
  addFilter: (filter: Filter) => void;
}

const totals: MetricName[] = [
  'visitors',
  'pageviews',
  'bounce_rate',
  'avg_session_duration',
  'revenue',
  'conversion_rate',
];

export function Overview({ api, domain, state, go, addFilter }: Props) {
  const base = { domain, timezone: state.timezone, filters: state.filters };
  const batched = useMemo(() => batchedQueries(api), [api]);
  const query = (body: Omit<QueryBody, 'domain'>) => batched({ ...base, ...body });
  const key = JSON.stringify([domain, state.range, state.timezone, state.filters, state.compare]);

  const [current] = useAnswer(async () => {
    const now = await query({ metrics: totals, include_revenue: true, date_range: queryRange(state) });
    const range = now.meta.date_range as [string, string];
    // Realtime compares with nothing: the last 30 minutes have no "period before" a person would read.
    const before =
      state.range === 'realtime'
        ? null
        : await query({ metrics: totals, include_revenue: true, date_range: comparedPeriod(range, state.compare) });
    return { range, now: now.data[0]!, before: before?.data[0] ?? null, future: now.meta.future_range === true };
  }, [key]);

  const [exporting, setExporting] = useState('');
  const exportView = async () => {
    setExporting('Exporting…');
    try {
      const zip = await viewZip(query, {
        domain,
        filters: state.filters,
        range: queryRange(state),
        timezone: state.timezone,
        // As the chart draws it: one day by the hour.
        time:
          state.range === 'realtime'
            ? 'minute'
            : current.state === 'done' && current.data.range[0] === current.data.range[1]
              ? 'hour'
              : intervalDimensions[state.interval],
      });
      download(`${exportName(domain, state)}.zip`, zip, 'application/zip');
      setExporting('');
    } catch (error) {
      setExporting(`Not exported: ${(error as Error).message}`);
    }
  };

  return (
    <main class="overview">
      <div class="overview-actions">
        <span class="muted" role="status">
          {exporting}
        </span>
        <button type="button" onClick={exportView}>
          Export CSVs (ZIP)
        </button>
      </div>
      <section class="stats" aria-label="Totals" aria-busy={current.state === 'loading'}>
        {totals.map((metric) => (
          <Stat key={metric} metric={metric} answer={current} compared={comparedLabel[state.compare]} />
        ))}
      </section>
      {current.state === 'done' && (
        <Traffic api={api} domain={domain} state={state} go={go} range={current.data.range} query={query} />
      )}
      <div class="lists">
        {cards.map((card) => (
          <TabbedList key={card.title} card={card} domain={domain} query={query} state={state} addFilter={addFilter} />
        ))}
        {current.state === 'done' && (
          <Goals
            api={api}
            domain={domain}
            state={state}
            visitors={current.data.now.metrics.visitors ?? 0}
            query={query}
            addFilter={addFilter}
          />
        )}
        {current.state === 'done' && (
          <CustomEvents
            api={api}
            domain={domain}
            state={state}
            range={current.data.range}
            visitors={current.data.now.metrics.visitors ?? 0}
            query={query}
            addFilter={addFilter}
          />
        )}
      </div>
    </main>
  );
}

/** How the cards and the chart name the period compared with. */
const comparedLabel = { previous: 'previous period', year: 'a year before' } as const;

function Stat({
  metric,
  answer,
  compared: comparedName,
}: {
  metric: MetricName;
  answer: Answer<{ now: QueryRow; before: QueryRow | null; future: boolean }>;
  compared: string;
}) {
  if (answer.state !== 'done') {
    return (
      <div class="stat" data-metric={metric}>
        <span class="label">{metricLabels[metric]}</span>
        <strong class="value">{answer.state === 'failed' ? '–' : '…'}</strong>
      </div>
    );
  }
  const now = answer.data.now.metrics[metric] ?? 0;
  if (answer.data.before === null) {
    return (
      <div class="stat" data-metric={metric}>
        <span class="label">{metricLabels[metric]}</span>
        <strong class="value">{formatMetric(metric, now)}</strong>
        <span class="delta same">last 30 minutes</span>
      </div>
    );
  }
  const before = answer.data.before.metrics[metric] ?? 0;
  const delta = change(now, before);
  // Fewer bounces is better: its arrow is coloured the other way round.
  const better = delta === null || delta === 0 ? 'same' : delta > 0 !== (metric === 'bounce_rate') ? 'up' : 'down';
  // No comparison where there is nothing to compare: a range that has not begun, or nothing in either period.
  const compared = !answer.data.future && (now !== 0 || before !== 0);
  const title = answer.data.future
    ? 'the range has not begun: no data yet'
    : `${comparedName}: ${formatMetric(metric, before)}`;
  return (
    <div class="stat" data-metric={metric}>
      <span class="label">{metricLabels[metric]}</span>
      <strong class="value">{formatMetric(metric, now)}</strong>
      <span class={`delta ${compared ? better : 'same'}`} title={title}>
        {deltaText(compared, delta)}
      </span>
    </div>
  );
}

/** A card's change from the previous period: a dash where nothing is compared, "new" where nothing was before. */
function deltaText(compared: boolean, delta: number | null): string {
  if (!compared) return '–';
  if (delta === null) return 'new';
  return `${delta >= 0 ? '▲' : '▼'} ${Math.abs(delta).toFixed(1)}%`;
}

function Traffic({
  api,
  domain,
  state,
  go,
  range,
  query,
}: {
  api: Api;
  domain: string;
  state: ViewState;
  go: (state: ViewState) => void;
  range: [string, string];
  query: Query;
}) {
  // One day is drawn by the hour; longer ranges by the day, week or month the view asks for. Visitors of a week or
  // month are counted by the API (the week and month dimensions): a visitor of several days is one visitor.
  // Realtime is drawn by the minute.
  const realtime = state.range === 'realtime';
  const hourly = range[0] === range[1];
  const interval: Interval = realtime ? 'minute' : hourly ? 'hour' : state.interval;
  const dimension = intervalDimensions[interval];
  const [daily] = useAnswer(
    () =>
      query({
        metrics: ['visitors', 'pageviews'],
        dimensions: [dimension],
        date_range: realtime ? '30m' : range,
        limit: pointsAtMost(range, interval),
      }),
    [JSON.stringify([range, state.filters, state.timezone, interval])],
  );
  // The compared period's visitors, drawn as a second line point by point (the n-th point against the n-th).
  const before = comparedPeriod(range, state.compare);
  const [earlier] = useAnswer(
    () =>
      realtime
        ? Promise.resolve(null)
        : query({
            metrics: ['visitors'],
            dimensions: [dimension],
            date_range: before,
            limit: pointsAtMost(before, interval),
          }),
    [JSON.stringify([before, state.filters, state.timezone, interval])],
  );
  // The point not over yet: the minute or hour now (later hours of today are not drawn), else today's day, week or
  // month.
  const current =
    interval === 'minute'
      ? minuteIn(state.timezone)
      : hourly
        ? hourIn(state.timezone)
        : periodStart(todayIn(state.timezone), interval);
  const [notes, reload] = useAnswer(
    () =>
      answer(
        api.GET('/v1/annotations', { params: { query: { domain, start_date: range[0], end_date: range[1] } } }),
      ).then((a) => a.data),
    [domain, range[0], range[1]],
  );
  const readOnly = useContext(ReadOnly);
  const [title, setTitle] = useState('');
  const [date, setDate] = useState(range[1]);
  const [problem, write] = useWrite();
  // Kept between renders (typing an annotation's title re-renders the card): the chart is drawn again only when
  // its data changes.
  const points = useMemo(
    () => (daily.state === 'done' ? fillPoints(range, daily.data.data, interval, current) : []),
    [daily],
  );
  const compared = useMemo(
    () =>
      earlier.state === 'done' && earlier.data
        ? {
            label: `Visitors, ${comparedLabel[state.compare]}`,
            visitors: fillPoints(before, earlier.data.data, interval).map((p) => p.visitors),
          }
        : undefined,
    [earlier],
  );
  const annotations: Annotation[] = useMemo(() => (notes.state === 'done' ? notes.data : []), [notes]);
  // The last 30 minutes hold no annotation's day on their axis.
  const shownNotes = realtime ? NO_NOTES : annotations;

  const add = (event: Event) => {
    event.preventDefault();
    return write(async () => {
      await answer(api.POST('/v1/annotations', { body: { domain, date, title } }));
      setTitle('');
      reload();
    });
  };
  const remove = (id: string) =>
    write(async () => {
      await answer(api.DELETE('/v1/annotations/{id}', { params: { path: { id }, query: { domain } } }));
      reload();
    });

  return (
    <section class="card traffic" aria-label="Traffic">
      <div class="card-head">
        <h2>Visitors and pageviews</h2>
        {!hourly && !realtime && (
          <label>
            Interval{' '}
            <select
              name="interval"
              value={state.interval}
              onChange={(e) => go({ ...state, interval: e.currentTarget.value as ChartInterval })}
            >
              <option value="day">Days</option>
              <option value="week">Weeks</option>
              <option value="month">Months</option>
            </select>
          </label>
        )}
      </div>
      {daily.state === 'done' ? (
        <TrafficChart
          points={points}
          annotations={shownNotes}
          current={current}
          interval={interval}
          {...(compared ? { compared } : {})}
        />
      ) : (
        <div class="chart placeholder">{daily.state === 'failed' ? 'Not loaded.' : 'Loading…'}</div>
      )}
      {daily.state === 'done' && (
        <details class="chart-table">
          <summary>The chart as a table</summary>
          <div class="scroll">
            <table>
              <Head
                columns={[intervalHeads[interval], 'Visitors', 'Pageviews', ...(compared ? [compared.label] : [])]}
              />
              <tbody>
                {points.map((p, i) => (
                  <tr key={p.date}>
                    <td>
                      <time>{p.date}</time>
                    </td>
                    <td class="number">{formatCount(p.visitors)}</td>
                    <td class="number">{formatCount(p.pageviews)}</td>
                    {compared && <td class="number">{formatCount(compared.visitors[i] ?? 0)}</td>}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      )}
      <details class="annotations">
        <summary>Annotations ({annotations.length})</summary>
        <ul>
          {annotations.map((a) => (
            <li key={a.id}>
              <time>{a.date}</time> {a.title}
              {!readOnly && (
                <button
                  type="button"
                  class="link"
                  onClick={() => remove(a.id)}
                  aria-label={`Delete annotation ${a.title}`}
                >
                  Delete
                </button>
              )}
            </li>
          ))}
        </ul>
        {!readOnly && (
          <form onSubmit={add} class="inline">
            <label>
              Date{' '}
              <input
                type="date"
                required
                value={date}
                min={range[0]}
                max={range[1]}
                onInput={(e) => setDate(e.currentTarget.value)}
              />
            </label>
            <label>
              Title{' '}
              <input
                required
                maxLength={250}
                value={title}
                onInput={(e) => setTitle(e.currentTarget.value)}
                placeholder="Launched pricing page"
              />
            </label>
            <button type="submit">Add annotation</button>
          </form>
        )}
        <WriteProblem problem={problem} />
      </details>
    </section>
  );
}

/** One empty list for every render: a new one would draw the chart again (its effect depends on the list). */
const NO_NOTES: Annotation[] = [];

const intervalDimensions = { minute: 'minute', hour: 'hour', day: 'date', week: 'week', month: 'month' } as const;
const intervalHeads: Record<Interval, string> = {
  minute: 'Minute',
  hour: 'Hour',
  day: 'Date',
  week: 'Week of',
  month: 'Month of',
};

/**
 * The most rows the chart's query can answer over `[start, end]` by `interval` (its limit): a query's rows fit a
 * batch's 1,000 together (dashboard/query-batches.ts), so the chart's query rides in the cards' batch. An hour more
 * than a day's 24 for the day clocks go back; the 30 minutes of realtime, whose range names one or two days.
 */
function pointsAtMost([start, end]: [string, string], interval: Interval): number {
  const days = Math.round((Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / 86_400_000) + 1;
  const points = { minute: 31, hour: 25, day: days, week: Math.floor(days / 7) + 2, month: Math.ceil(days / 28) + 1 };
  return Math.min(1000, Math.max(1, points[interval]));
}

/** The first day of the week (from Monday) or month holding `day`, as the API's week and month dimensions name it. */
function periodStart(day: string, interval: Interval): string {
  if (interval === 'month') return `${day.slice(0, 8)}01`;
  if (interval !== 'week') return day;
  const ms = Date.parse(`${day}T00:00:00Z`);
  return new Date(ms - ((new Date(ms).getUTCDay() + 6) % 7) * 86_400_000).toISOString().slice(0, 10);
}

/**
 * One point per hour of the range's one day (up to `upTo`, the hour now, where it is today), or per day, week or
 * month of the range (a week or month the range starts inside is named by its first day, as the API names it): the
 * API returns no row for a period without traffic.
 */
function fillPoints([start, end]: [string, string], rows: QueryRow[], interval: Interval, upTo?: string): DailyPoint[] {
  const dimension = intervalDimensions[interval];
  const byAt = new Map(rows.map((r) => [r.dimensions[dimension], r.metrics]));
  const ats: string[] = [];
  if (interval === 'minute') {
    // The 30 minutes up to `upTo`, the minute now.
    const last = Date.parse(`${upTo!.replace(' ', 'T')}Z`);
    for (let m = 29; m >= 0; m--) {
      const at = new Date(last - m * 60_000).toISOString();
      ats.push(`${at.slice(0, 10)} ${at.slice(11, 16)}:00`);
    }
  } else if (interval === 'hour') {
    for (let h = 0; h < 24; h++) ats.push(`${start} ${String(h).padStart(2, '0')}:00:00`);
  } else {
    for (let ms = Date.parse(`${start}T00:00:00Z`); ms <= Date.parse(`${end}T00:00:00Z`); ms += 86_400_000) {
      const at = periodStart(new Date(ms).toISOString().slice(0, 10), interval);
      if (ats.at(-1) !== at) ats.push(at);
    }
  }
  return ats
    .filter((at) => interval !== 'hour' || upTo === undefined || !upTo.startsWith(start) || at <= upTo)
    .map((at) => ({ date: at, visitors: byAt.get(at)?.visitors ?? 0, pageviews: byAt.get(at)?.pageviews ?? 0 }));
}

/** The tab a card shows, kept per card in this browser as Plausible does. */
function useCardTab(card: ListCard): [ListTab, (t: ListTab) => void] {
  const stored = `tab:${card.title}`;
  const [label, setLabel] = useState(() => {
    try {
      return localStorage.getItem(stored);
    } catch {
      return null;
    }
  });
  const current = card.tabs.find((t) => t.label === label) ?? card.tabs[0]!;
  return [
    current,
    (t) => {
      setLabel(t.label);
      try {
        localStorage.setItem(stored, t.label);
      } catch {
        // A browser that keeps nothing shows the first tab next time.
      }
    },
  ];
}

/** A list card with tabs (the WAI-ARIA tabs pattern: arrow keys move between tabs, the panel follows). */
function TabbedList(props: {
  card: ListCard;
  domain: string;
  query: Query;
  state: ViewState;
  addFilter: (f: Filter) => void;
}) {
  const { card, domain, query, state, addFilter } = props;
  const [current, choose] = useCardTab(card);
  const [details, setDetails] = useState(false);
  const { dimension, second } = current;
  const view = { filters: state.filters, range: queryRange(state), fileName: exportName(domain, state) };
  const [rows] = useAnswer(
    () => query({ ...listBody(current, view), limit: 10 }),
    [JSON.stringify([dimension, state.range, state.filters, state.timezone])],
  );
  const id = (t: ListTab) => `tab-${t.dimension}`;
  const onKey = (e: KeyboardEvent) => {
    const at = card.tabs.indexOf(current);
    const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
    const to = e.key === 'Home' ? 0 : e.key === 'End' ? card.tabs.length - 1 : at + step;
    if (to === at && step === 0 && e.key !== 'Home' && e.key !== 'End') return;
    e.preventDefault();
    const next = card.tabs[(to + card.tabs.length) % card.tabs.length]!;
    choose(next);
    document.getElementById(id(next))?.focus();
  };
  return (
    <section class="card list" aria-label={card.title}>
      <div class="card-head">
        <h2>{card.title}</h2>
        <div role="tablist" aria-label={`${card.title} by`} class="tabs" onKeyDown={onKey}>
          {card.tabs.map((t) => (
            <button
              key={t.dimension}
              type="button"
              role="tab"
              id={id(t)}
              aria-selected={t === current}
              aria-controls={`${id(t)}-panel`}
              tabIndex={t === current ? 0 : -1}
              onClick={() => choose(t)}
            >
              {t.label}
            </button>
          ))}
        </div>
      </div>
      <div role="tabpanel" id={`${id(current)}-panel`} aria-labelledby={id(current)} data-dimension={dimension}>
        {dimension === 'country' && (
          <WorldMap
            query={query}
            body={{ ...listBody(current, view), timezone: state.timezone }}
            onPick={(country) => addFilter(['country', 'is', country] as Filter)}
          />
        )}
        <Rows
          answer={rows}
          columns={[current.label, 'Visitors', second.label]}
          second={second.metric}
          name={(r) => r.dimensions[dimension] ?? '(not set)'}
          onPick={(value) => addFilter([dimension, 'is', value] as Filter)}
        />
      </div>
      <button type="button" class="link details" onClick={() => setDetails(true)}>
        Details<span class="visually-hidden">: all {current.label.toLowerCase()}</span>
      </button>
      {card.title === 'Locations' && (
        // DB-IP's licence (CC BY 4.0) asks pages that show its results to link back.
        <p class="muted attribution">
          Collected events are placed by <a href="https://db-ip.com">IP Geolocation by DB-IP</a>.
        </p>
      )}
      {details && (
        <FullList tab={current} view={view} query={query} addFilter={addFilter} onClose={() => setDetails(false)} />
      )}
    </section>
  );
}

function Rows({
  answer: rows,
  columns,
  second,
  name,
  onPick,
}: {
  answer: Answer<{ data: QueryRow[] }>;
  columns: [string, string, string];
  second: 'pageviews' | 'visits';
  name: (row: QueryRow) => string;
  onPick: (value: string) => void;
}) {
  if (rows.state === 'loading') return <p class="muted">Loading…</p>;
  if (rows.state === 'failed') return <NotLoaded />;
  if (rows.data.data.length === 0) return <p class="muted">No data in this range.</p>;
  const top = Math.max(...rows.data.data.map((r) => r.metrics.visitors ?? 0), 1);
  return (
    <table>
      <Head columns={columns} />
      <tbody>
        {rows.data.data.map((row) => (
          <tr key={name(row)}>
            <td>
              <button
                type="button"
                class="row-filter"
                onClick={() => onPick(name(row))}
                title="Filter by this value"
                style={{ '--share': `${((row.metrics.visitors ?? 0) / top) * 100}%` }}
              >
                {name(row)}
              </button>
            </td>
            <td class="number">{formatCount(row.metrics.visitors ?? 0)}</td>
            <td class="number">{formatCount(row.metrics[second] ?? 0)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A list's header: the name column, then number columns. */
function Head({ columns: [name, ...numbers] }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        <th scope="col">{name}</th>
        {numbers.map((n) => (
          <th key={n} scope="col" class="number">
            {n}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/**
 * The custom events of the view: POST /v1/query by `event` (a visitor segment), so the filters and the time zone
 * apply as on every other card; the conversion rate is the event's visitors over the view's visitors.
 */
function CustomEvents({
  api,
  domain,
  state,
  range,
  visitors,
  query,
  addFilter,
}: {
  api: Api;
  domain: string;
  state: ViewState;
  range: [string, string];
  visitors: number;
  query: Query;
  addFilter: (f: Filter) => void;
}) {
  const [events] = useAnswer(
    () => query({ metrics: ['visitors'], dimensions: ['event'], date_range: queryRange(state), limit: 10 }),
    [JSON.stringify([state.range, state.filters, state.timezone])],
  );
  const [open, setOpen] = useState<string | null>(null);
  // The property endpoints count UTC days without filters (docs/API.md, "Custom events").
  const period = { domain, start: range[0], end: range[1] };
  return (
    <section class="card list" aria-label="Custom events">
      <h2>Custom events</h2>
      {events.state === 'loading' && <p class="muted">Loading…</p>}
      {events.state === 'failed' && <NotLoaded />}
      {events.state === 'done' && events.data.data.length === 0 && <p class="muted">No custom events in this range.</p>}
      {events.state === 'done' && events.data.data.length > 0 && (
        <table>
          <Head columns={['Event', 'Visitors', 'Conversion rate']} />
          <tbody>
            {events.data.data.map((row) => {
              const name = row.dimensions.event ?? '(not set)';
              const count = row.metrics.visitors ?? 0;
              return (
                <tr key={name}>
                  <td>
                    <button
                      type="button"
                      class="row-filter"
                      onClick={() => addFilter(['event', 'is', name] as Filter)}
                      title="Keep visitors who sent this event"
                    >
                      {name}
                    </button>
                    <button
                      type="button"
                      class="link"
                      aria-expanded={open === name}
                      aria-label={`Properties of ${name}`}
                      onClick={() => setOpen(open === name ? null : name)}
                    >
                      properties
                    </button>
                    {open === name && <Properties api={api} period={period} event={name} addFilter={addFilter} />}
                  </td>
                  <td class="number">{formatCount(count)}</td>
                  <td class="number">{formatMetric('conversion_rate', visitors > 0 ? (count / visitors) * 100 : 0)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Properties({
  api,
  period,
  event,
  addFilter,
}: {
  api: Api;
  period: { domain: string; start: string; end: string };
  event: string;
  addFilter: (f: Filter) => void;
}) {
  const [keys] = useAnswer(
    () => answer(api.GET('/v1/events/{name}/properties', { params: { path: { name: event }, query: period } })),
    [event, JSON.stringify(period)],
  );
  const [key, setKey] = useState<string | null>(null);
  const [values] = useAnswer(
    () =>
      key
        ? answer(
            api.GET('/v1/events/{name}/properties/{key}', {
              params: { path: { name: event, key }, query: { ...period, limit: 10 } },
            }),
          )
        : Promise.resolve(null),
    [event, key, JSON.stringify(period)],
  );
  if (keys.state === 'failed') return <NotLoaded />;
  if (keys.state !== 'done') return <p class="muted">Loading…</p>;
  if (keys.data.data.length === 0) return <p class="muted">No properties in this range.</p>;
  return (
    <div class="properties">
      <p class="muted">UTC days, without the view's filters.</p>
      <label>
        Property{' '}
        <select onChange={(e) => setKey(e.currentTarget.value || null)} value={key ?? ''}>
          <option value="">choose…</option>
          {keys.data.data.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </label>
      {values.state === 'done' && values.data && (
        <ul>
          {values.data.data.map((v) => (
            <li key={v.value}>
              <button
                type="button"
                class="row-filter"
                onClick={() => addFilter(['event_property', 'is', `${key}:${v.value}`] as Filter)}
              >
                {v.value}
              </button>{' '}
              <span class="muted">{formatCount(v.visitors)} visitors</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The name of the view's export files: the site and the range. */
function exportName(domain: string, state: ViewState): string {
  const range = Array.isArray(state.range) ? state.range.join('_') : state.range;
  return `${domain}-${range}`;
}
