import { formatCount } from './format';
import type { QueryBody } from './api';
import type { Query } from './lists';
import { useAnswer } from './use-answer';

// Countries on a world map, shaded by visitors, above the Countries list (which is the map's text alternative).
// The outlines come from the server as ready SVG paths (local/server/country-shapes.ts), fetched once.

interface Shapes {
  width: number;
  height: number;
  paths: Record<string, string>;
}

let shapes: Promise<Shapes> | undefined;
function loadShapes(): Promise<Shapes> {
  shapes ??= fetch('dashboard/countries.json')
    .then((r) => {
      if (!r.ok) throw new Error(`The map's outlines did not load (${r.status})`);
      return r.json() as Promise<Shapes>;
    })
    .catch((error: unknown) => {
      // Asked again on the next try (the banner's Retry), not failed for good.
      shapes = undefined;
      throw error;
    });
  return shapes;
}

/** Every country of the view (the list shows the top ten): at most 300, more than there are codes. */
export function WorldMap({
  query,
  body,
  onPick,
}: {
  query: Query;
  body: Omit<QueryBody, 'domain'>;
  onPick: (country: string) => void;
}) {
  const [map] = useAnswer(loadShapes, []);
  const [rows] = useAnswer(() => query({ ...body, limit: 300 }), [JSON.stringify(body)]);
  if (map.state !== 'done' || rows.state !== 'done') return <div class="world-map placeholder" />;
  const visitors = new Map(rows.data.data.map((r) => [r.dimensions.country ?? '', r.metrics.visitors ?? 0]));
  const top = Math.max(1, ...visitors.values());
  return (
    <svg
      class="world-map"
      viewBox={`0 0 ${map.data.width} ${map.data.height}`}
      role="img"
      aria-label="Visitors by country on a world map; the list below gives the same numbers"
    >
      {Object.entries(map.data.paths).map(([code, d]) => {
        const count = visitors.get(code) ?? 0;
        // Shares from 0 to 1 as the accent's opacity, a faint floor so a country with any visitor shows.
        const share = count === 0 ? 0 : 0.15 + 0.85 * (count / top);
        return (
          <path
            key={code}
            d={d}
            data-country={code}
            class={count > 0 ? 'visited' : undefined}
            style={count > 0 ? { fillOpacity: share } : undefined}
            onClick={count > 0 ? () => onPick(code) : undefined}
          >
            <title>{`${code}: ${formatCount(count)} visitors`}</title>
          </path>
        );
      })}
    </svg>
  );
}
