import { useContext, useState } from 'preact/hooks';
import { ReadOnly } from './share';
import { answer, type Api, type Filter } from './api';
import type { components } from './api-types';
import { formatCount, formatMetric } from './format';
import type { Query } from './lists';
import { NotLoaded, useWrite, WriteProblem } from './problems';
import { queryRange, type ViewState } from './state';
import { useAnswer } from './use-answer';

// The goals card: the site's goals (GET /v1/goals, an extension) with their visitors in the view (POST /v1/query:
// event goals by the `event` dimension, exact page goals by `page`, a page goal ending in `*` by `starts_with`)
// and their share of the view's visitors, as Plausible's goals card shows them. Goals are added and removed here
// with a key that may write.

type Goal = components['schemas']['Goal'];

const prefixOf = (goal: Goal) => (goal.page_path?.endsWith('*') ? goal.page_path.slice(0, -1) : null);
const nameOf = (goal: Goal) => (goal.kind === 'event' ? goal.event_name! : `Visit ${goal.page_path}`);
/** The filter that keeps a goal's visitors, added by a click on it. */
function filterOf(goal: Goal): Filter {
  if (goal.kind === 'event') return ['event', 'is', goal.event_name!] as Filter;
  const prefix = prefixOf(goal);
  return (prefix === null ? ['page', 'is', goal.page_path!] : ['page', 'starts_with', prefix]) as Filter;
}

export function Goals({
  api,
  domain,
  state,
  visitors,
  query,
  addFilter,
}: {
  api: Api;
  domain: string;
  state: ViewState;
  visitors: number;
  query: Query;
  addFilter: (f: Filter) => void;
}) {
  const [goals, reload] = useAnswer(
    () => answer(api.GET('/v1/goals', { params: { query: { domain } } })).then((a) => a.data),
    [domain],
  );
  const range = queryRange(state);
  const [counted] = useAnswer(async () => {
    if (goals.state !== 'done') return null;
    return countGoals(goals.data, query, { range, filters: state.filters });
  }, [goals, JSON.stringify([range, state.filters, state.timezone])]);
  const readOnly = useContext(ReadOnly);
  const [kind, setKind] = useState<'event' | 'page'>('event');
  const [value, setValue] = useState('');
  const [problem, write] = useWrite();

  const add = (event: Event) => {
    event.preventDefault();
    return write(async () => {
      const body = kind === 'event' ? { domain, event_name: value } : { domain, page_path: value };
      await answer(api.POST('/v1/goals', { body }));
      setValue('');
      reload();
    });
  };
  const remove = (goal: Goal) =>
    write(async () => {
      await answer(api.DELETE('/v1/goals/{id}', { params: { path: { id: goal.id }, query: { domain } } }));
      reload();
    });

  return (
    <section class="card list" aria-label="Goals">
      <h2>Goals</h2>
      {(goals.state === 'failed' || counted.state === 'failed') && <NotLoaded />}
      {goals.state === 'loading' && <p class="muted">Loading…</p>}
      {goals.state === 'done' && goals.data.length === 0 && (
        <p class="muted">{readOnly ? 'No goals.' : 'No goals yet: add a custom event or a page below.'}</p>
      )}
      {goals.state === 'done' && goals.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Goal</th>
              <th scope="col" class="number">
                Uniques
              </th>
              <th scope="col" class="number">
                Conversion rate
              </th>
            </tr>
          </thead>
          <tbody>
            {goals.data.map((goal) => {
              const uniques = counted.state === 'done' && counted.data ? (counted.data.get(goal.id) ?? 0) : null;
              return (
                <tr key={goal.id}>
                  <td>
                    <button
                      type="button"
                      class="row-filter"
                      title="Keep the visitors who reached this goal"
                      onClick={() => addFilter(filterOf(goal))}
                    >
                      {nameOf(goal)}
                    </button>
                    {!readOnly && (
                      <button
                        type="button"
                        class="link"
                        aria-label={`Remove goal ${nameOf(goal)}`}
                        onClick={() => remove(goal)}
                      >
                        remove
                      </button>
                    )}
                  </td>
                  <td class="number">{uniques === null ? '…' : formatCount(uniques)}</td>
                  <td class="number">
                    {uniques === null
                      ? '…'
                      : formatMetric('conversion_rate', visitors > 0 ? (uniques / visitors) * 100 : 0)}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {!readOnly && (
        <form onSubmit={add} class="inline goal-form">
          <label>
            Goal{' '}
            <select name="goal-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as 'event' | 'page')}>
              <option value="event">Custom event</option>
              <option value="page">Page</option>
            </select>
          </label>
          <label>
            {kind === 'event' ? 'Event name' : 'Path'}{' '}
            <input
              name="goal-value"
              required
              value={value}
              onInput={(e) => setValue(e.currentTarget.value)}
              placeholder={kind === 'event' ? 'signup' : '/pricing or /blog/*'}
            />
          </label>
          <button type="submit">Add goal</button>
        </form>
      )}
      <WriteProblem problem={problem} />
    </section>
  );
}

/** The longest filter value the API takes (docs/API.md, "Filters"). */
const MAX_FILTER_VALUE = 1000;

/**
 * Each goal's visitors in the view, by goal id: one query for the event goals (the `event` dimension), one per
 * batch of exact pages (the `page` dimension under `page is a,b,...`, within the API's filter length), one per
 * page prefix.
 */
async function countGoals(
  goals: Goal[],
  query: Query,
  view: { range: ReturnType<typeof queryRange>; filters: Filter[] },
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const events = goals.filter((g) => g.kind === 'event');
  const exact = goals.filter((g) => g.kind === 'page' && prefixOf(g) === null);
  const prefixed = goals.filter((g) => g.kind === 'page' && prefixOf(g) !== null);
  const asks: Promise<void>[] = [];
  if (events.length) {
    asks.push(
      query({ metrics: ['visitors'], dimensions: ['event'], date_range: view.range, limit: 1000 }).then((a) => {
        const byName = new Map(a.data.map((r) => [r.dimensions.event, r.metrics.visitors ?? 0]));
        for (const g of events) counts.set(g.id, byName.get(g.event_name!) ?? 0);
      }),
    );
  }
  const batches: Goal[][] = [];
  for (const g of exact) {
    const last = batches.at(-1);
    const length = last ? last.reduce((n, b) => n + b.page_path!.length + 1, 0) : Infinity;
    if (last && length + g.page_path!.length <= MAX_FILTER_VALUE) last.push(g);
    else batches.push([g]);
  }
  for (const batch of batches) {
    const paths = batch.map((g) => g.page_path!);
    asks.push(
      query({
        metrics: ['visitors'],
        dimensions: ['page'],
        date_range: view.range,
        // One row per path the filter names at most (`is` splits its value at commas).
        limit: Math.min(1000, paths.join(',').split(',').length),
        filters: [...view.filters, ['page', 'is', paths.join(',')] as Filter],
      }).then((a) => {
        const byPath = new Map(a.data.map((r) => [r.dimensions.page, r.metrics.visitors ?? 0]));
        for (const g of batch) counts.set(g.id, byPath.get(g.page_path!) ?? 0);
      }),
    );
  }
  for (const g of prefixed) {
    asks.push(
      query({ metrics: ['visitors'], date_range: view.range, filters: [...view.filters, filterOf(g)] }).then((a) => {
        counts.set(g.id, a.data[0]?.metrics.visitors ?? 0);
      }),
    );
  }
  await Promise.all(asks);
  return counts;
}
