import { useEffect, useState } from 'preact/hooks';
import { useModal } from './modal';
import { answer, type Api, type Filter } from './api';
import { filterSchema, eventFilterFields, rowFilterFields, sessionPageFields } from '../shared/requests/filters';
import { queryRange, type ViewState } from './state';
import { useAnswer } from './use-answer';

// The filter editor beside click-to-filter: a field, an operator and a value, with the values of the field in the
// view as suggestions (POST /v1/query by that field, narrowed by what is typed); and segments, named sets of filters
// kept in this browser per site (docs/DECISIONS.md, "Dashboard").

const fields: { field: Filter[0]; label: string }[] = [
  { field: 'page', label: 'Page' },
  { field: 'entry_page', label: 'Entry page' },
  { field: 'exit_page', label: 'Exit page' },
  { field: 'referrer', label: 'Referrer (domain)' },
  { field: 'utm_source', label: 'UTM source' },
  { field: 'utm_medium', label: 'UTM medium' },
  { field: 'utm_campaign', label: 'UTM campaign' },
  { field: 'utm_content', label: 'UTM content' },
  { field: 'utm_term', label: 'UTM term' },
  { field: 'country', label: 'Country' },
  { field: 'region', label: 'Region' },
  { field: 'city', label: 'City' },
  { field: 'browser', label: 'Browser' },
  { field: 'os', label: 'OS' },
  { field: 'device', label: 'Device' },
  { field: 'event', label: 'Custom event (visitors who sent it)' },
  { field: 'event_property', label: 'Event property (key:value)' },
  { field: 'exit_link', label: 'Outbound link (URL)' },
];

const operators: { operator: Filter[1]; label: string }[] = [
  { operator: 'is', label: 'is' },
  { operator: 'is_not', label: 'is not' },
  { operator: 'contains', label: 'contains' },
  { operator: 'not_contains', label: 'does not contain' },
  { operator: 'starts_with', label: 'starts with' },
];

/** The API's own rule for a filter (shared/requests/filters.ts), to say what is wrong before asking. */
const filterRule = filterSchema([...rowFilterFields, ...eventFilterFields, 'exit_link', ...sessionPageFields]);

/** Fields whose values the query endpoint can list as a dimension. */
const suggested = new Set<string>([...rowFilterFields, ...sessionPageFields, 'event']);

export function FilterEditor({
  api,
  domain,
  state,
  go,
}: {
  api: Api;
  domain: string;
  state: ViewState;
  go: (s: ViewState) => void;
}) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Add filter
      </button>
      {open && <FilterDialog api={api} domain={domain} state={state} go={go} onClose={() => setOpen(false)} />}
    </>
  );
}

function FilterDialog({
  api,
  domain,
  state,
  go,
  onClose,
}: {
  api: Api;
  domain: string;
  state: ViewState;
  go: (s: ViewState) => void;
  onClose: () => void;
}) {
  const dialog = useModal();
  const [field, setField] = useState<Filter[0]>('page');
  const [operator, setOperator] = useState<Filter[1]>('is');
  const [value, setValue] = useState('');
  const [typed, setTyped] = useState('');
  const [problem, setProblem] = useState('');
  useEffect(() => {
    const wait = setTimeout(() => setTyped(value.trim()), 250);
    return () => clearTimeout(wait);
  }, [value]);
  const [values] = useAnswer(async () => {
    if (!suggested.has(field)) return [];
    const narrowed = typed ? [[field, 'contains', typed] as Filter] : [];
    const found = await answer(
      api.POST('/v1/query', {
        body: {
          domain,
          timezone: state.timezone,
          date_range: queryRange(state),
          filters: [...state.filters, ...narrowed],
          dimensions: [field as 'page'],
          metrics: ['visitors'],
          limit: 20,
        },
      }),
    );
    return found.data.map((r) => r.dimensions[field as 'page'] ?? '').filter((v) => v !== '');
  }, [field, typed, JSON.stringify([state.range, state.filters, state.timezone])]);

  const add = (event: Event) => {
    event.preventDefault();
    const filter = [field, operator, value] as Filter;
    const checked = filterRule.safeParse(filter);
    if (!checked.success) {
      setProblem(`Value ${checked.error.issues[0]!.message}`);
      return;
    }
    const known = state.filters.some((f) => JSON.stringify(f) === JSON.stringify(filter));
    if (!known) go({ ...state, filters: [...state.filters, filter] });
    dialog.current?.close();
  };
  return (
    <dialog ref={dialog} class="filter-editor" aria-labelledby="filter-editor-title" onClose={onClose}>
      <h2 id="filter-editor-title">Add a filter</h2>
      <form onSubmit={add} class="filter-form">
        <label>
          Field{' '}
          <select name="filter-field" value={field} onChange={(e) => setField(e.currentTarget.value as Filter[0])}>
            {fields.map((f) => (
              <option key={f.field} value={f.field}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Operator{' '}
          <select
            name="filter-operator"
            value={operator}
            onChange={(e) => setOperator(e.currentTarget.value as Filter[1])}
          >
            {operators.map((o) => (
              <option key={o.operator} value={o.operator}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Value{' '}
          <input
            name="filter-value"
            required
            list="filter-values"
            value={value}
            autocomplete="off"
            placeholder={field === 'event_property' ? 'plan:pro' : ''}
            onInput={(e) => {
              setValue(e.currentTarget.value);
              setProblem('');
            }}
          />
        </label>
        <datalist id="filter-values">
          {values.state === 'done' && values.data.map((v) => <option key={v} value={v} />)}
        </datalist>
        <p class="muted">
          Comma-separated values with <em>is</em> and <em>is not</em> mean any of them; (not set) stands for a missing
          value.
        </p>
        {problem && (
          <p class="error" role="alert">
            {problem}
          </p>
        )}
        <div class="dialog-buttons">
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="submit">Add filter</button>
        </div>
      </form>
    </dialog>
  );
}

interface Segment {
  name: string;
  filters: Filter[];
}

const segmentsKey = (domain: string) => `segments:${domain}`;

function storedSegments(domain: string): Segment[] {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(segmentsKey(domain)) ?? '[]');
    if (!Array.isArray(parsed)) return [];
    // Anything a hand or an older page left that is not a segment of valid filters is skipped.
    return parsed.filter(
      (s): s is Segment =>
        typeof s?.name === 'string' &&
        Array.isArray(s.filters) &&
        s.filters.every((f: unknown) => filterRule.safeParse(f).success),
    );
  } catch {
    return [];
  }
}

/** Named sets of filters for this site, kept in this browser's localStorage: choose one to apply its filters. */
export function Segments({
  domain,
  state,
  go,
  readOnly,
}: {
  domain: string;
  state: ViewState;
  go: (s: ViewState) => void;
  /** A shared view chooses among this browser's segments but neither saves nor deletes one. */
  readOnly: boolean;
}) {
  const [segments, setSegments] = useState(() => storedSegments(domain));
  const [naming, setNaming] = useState(false);
  const [name, setName] = useState('');
  const store = (next: Segment[]) => {
    setSegments(next);
    localStorage.setItem(segmentsKey(domain), JSON.stringify(next));
  };
  const same = (s: Segment) => JSON.stringify(s.filters) === JSON.stringify(state.filters);
  const current = segments.find(same);
  return (
    <div class="segments">
      {segments.length > 0 && (
        <label>
          Segment{' '}
          <select
            name="segment"
            value={current?.name ?? ''}
            onChange={(e) => {
              const chosen = segments.find((s) => s.name === e.currentTarget.value);
              go({ ...state, filters: chosen ? chosen.filters : [] });
            }}
          >
            <option value="">none</option>
            {segments.map((s) => (
              <option key={s.name} value={s.name}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
      )}
      {current && !readOnly && (
        <button
          type="button"
          class="link"
          onClick={() => store(segments.filter((s) => s !== current))}
          aria-label={`Delete segment ${current.name}`}
        >
          Delete segment
        </button>
      )}
      {state.filters.length > 0 && !current && !naming && !readOnly && (
        <button type="button" class="link" onClick={() => setNaming(true)}>
          Save as segment
        </button>
      )}
      {naming && (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            const trimmed = name.trim();
            if (!trimmed) return;
            store([...segments.filter((s) => s.name !== trimmed), { name: trimmed, filters: state.filters }]);
            setNaming(false);
            setName('');
          }}
        >
          <label>
            Segment name{' '}
            <input
              name="segment-name"
              required
              maxLength={80}
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </label>
          <button type="submit">Save segment</button>
        </form>
      )}
    </div>
  );
}
