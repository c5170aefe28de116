import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { geoEqualEarth, geoPath } from 'd3-geo';
import countries from 'i18n-iso-countries';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';

// The dashboard's world map as data: each country's outline as an SVG path, keyed by the ISO 3166-1 alpha-2 code the
// store's `country` column holds, projected once here (Equal Earth, 960 x 500) so the page draws paths and
// ships no geography code. Outlines: Natural Earth 1:110m (public domain) through the world-atlas package (ISC);
// numeric-to-alpha-2 codes from i18n-iso-countries (MIT). A newer world-atlas updates the map (docs/DECISIONS.md).

export const MAP_SIZE = { width: 960, height: 500 } as const;

export interface CountryShapes {
  width: number;
  height: number;
  /** Alpha-2 code (upper case) -> SVG path. Places without a code (disputed areas) are left out. */
  paths: Record<string, string>;
}

export async function countryShapes(): Promise<CountryShapes> {
  const require = createRequire(import.meta.url);
  const topology = JSON.parse(await readFile(require.resolve('world-atlas/countries-110m.json'), 'utf8')) as Topology<{
    countries: GeometryCollection;
  }>;
  const shapes = feature(topology, topology.objects.countries);
  const projection = geoEqualEarth().fitSize([MAP_SIZE.width, MAP_SIZE.height], shapes);
  // One decimal of a pixel: a tenth of the file at full precision, no visible difference at this size.
  const path = geoPath(projection).digits(1);
  const paths: Record<string, string> = {};
  for (const shape of shapes.features) {
    const code = shape.id === undefined ? undefined : countries.numericToAlpha2(String(shape.id));
    const d = path(shape);
    if (code && d) paths[code] = d;
  }
  return { ...MAP_SIZE, paths };
}
