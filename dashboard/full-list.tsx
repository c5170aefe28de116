import { useEffect, useState } from 'preact/hooks';
import { useModal } from './modal';
import type { Filter, QueryBody } from './api';
import { formatCount } from './format';
import { allRows, download, listBody, listCsv } from './export';
import type { ListTab, Query } from './lists';
import { NotLoaded } from './problems';
import { useAnswer } from './use-answer';

// A card's full list in a modal dialog, as Plausible's "Details": search (the API's `contains` filter on the
// list's own field), sort by any column (a metric, or the name: the sort-by-dimension extension), pages of 100, and
// the list as CSV, searched and sorted as shown.

const PAGE = 100;

type SortField = 'visitors' | 'pageviews' | 'visits' | ListTab['dimension'];

export function FullList({
  tab,
  view,
  query,
  addFilter,
  onClose,
}: {
  tab: ListTab;
  view: { filters: Filter[]; range: QueryBody['date_range']; fileName: string };
  query: Query;
  addFilter: (f: Filter) => void;
  onClose: () => void;
}) {
  const dialog = useModal();
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState('');
  const [sort, setSort] = useState<{ field: SortField; order: 'asc' | 'desc' }>({ field: 'visitors', order: 'desc' });
  const [offset, setOffset] = useState(0);
  const [exporting, setExporting] = useState('');
  // The search is sent once typing pauses, and starts again from the first page.
  useEffect(() => {
    const wait = setTimeout(() => {
      setSearch(typed);
      setOffset(0);
    }, 300);
    return () => clearTimeout(wait);
  }, [typed]);
  const body = listBody(tab, view, { search, sort });
  const [rows] = useAnswer(() => query({ ...body, limit: PAGE, offset }), [JSON.stringify([body, offset])]);
  const columns: { field: SortField; label: string; number: boolean }[] = [
    { field: tab.dimension, label: tab.label, number: false },
    { field: 'visitors', label: 'Visitors', number: true },
    { field: tab.second.metric, label: tab.second.label, number: true },
  ];
  const sortBy = (field: SortField) => {
    // A column sorts descending first (ascending for names), and a second click turns it around.
    const first = field === tab.dimension ? 'asc' : 'desc';
    setSort(sort.field === field ? { field, order: sort.order === 'asc' ? 'desc' : 'asc' } : { field, order: first });
    setOffset(0);
  };
  const exportCsv = async () => {
    setExporting('Exporting…');
    try {
      const { rows: all, cut } = await allRows(query, body);
      download(`${view.fileName}-${tab.dimension}.csv`, listCsv(tab, all), 'text/csv;charset=utf-8');
      setExporting(cut ? `Exported the first ${formatCount(all.length)} rows.` : '');
    } catch (error) {
      setExporting(`Not exported: ${(error as Error).message}`);
    }
  };
  const titleId = `full-list-${tab.dimension}`;
  return (
    <dialog ref={dialog} class="full-list" aria-labelledby={titleId} onClose={onClose}>
      <div class="full-list-head">
        <h2 id={titleId}>{tab.label}</h2>
        <button type="button" class="close" aria-label="Close" onClick={() => dialog.current?.close()}>
          ×
        </button>
      </div>
      <div class="full-list-tools">
        <label>
          Search{' '}
          <input
            type="search"
            name="search"
            value={typed}
            onInput={(e) => setTyped(e.currentTarget.value)}
            placeholder={`${tab.label} containing…`}
          />
        </label>
        <button type="button" onClick={exportCsv}>
          Download CSV
        </button>
        <span class="muted" role="status">
          {exporting}
        </span>
      </div>
      {rows.state === 'loading' && <p class="muted">Loading…</p>}
      {rows.state === 'failed' && <NotLoaded />}
      {rows.state === 'done' && rows.data.data.length === 0 && <p class="muted">Nothing matches.</p>}
      {rows.state === 'done' && rows.data.data.length > 0 && (
        <>
          <table>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th
                    key={c.field}
                    scope="col"
                    class={c.number ? 'number' : undefined}
                    aria-sort={sort.field === c.field ? (sort.order === 'asc' ? 'ascending' : 'descending') : undefined}
                  >
                    <button type="button" class="sort" onClick={() => sortBy(c.field)}>
                      {c.label}
                      <span aria-hidden="true">
                        {sort.field === c.field ? (sort.order === 'asc' ? ' ▲' : ' ▼') : ''}
                      </span>
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.data.data.map((row) => {
                const name = row.dimensions[tab.dimension] ?? '(not set)';
                return (
                  <tr key={name}>
                    <td>
                      <button
                        type="button"
                        class="row-filter"
                        title="Filter by this value"
                        onClick={() => {
                          addFilter([tab.dimension, 'is', name] as Filter);
                          dialog.current?.close();
                        }}
                      >
                        {name}
                      </button>
                    </td>
                    <td class="number">{formatCount(row.metrics.visitors ?? 0)}</td>
                    <td class="number">{formatCount(row.metrics[tab.second.metric] ?? 0)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <nav class="pages" aria-label="Pages of the list">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
              Previous
            </button>
            <span>
              Rows {formatCount(offset + 1)}–{formatCount(offset + rows.data.data.length)}
            </span>
            <button type="button" disabled={!rows.data.pagination.has_more} onClick={() => setOffset(offset + PAGE)}>
              Next
            </button>
          </nav>
        </>
      )}
    </dialog>
  );
}
