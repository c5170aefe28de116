import type { paths } from './api-types';
import type { Dimension, QueryBody } from './api';

// The overview's list cards and their tabs, which the cards, their full lists and the export all read, and the one
// way they ask POST /v1/query (with the view's domain, zone and filters already set).

export type QueryAnswer = paths['/v1/query']['post']['responses'][200]['content']['application/json'];
export type Query = (body: Omit<QueryBody, 'domain'>) => Promise<QueryAnswer>;

/** One tab of a list card: the dimension it groups by (also the filter a row adds) and its number columns. */
export interface ListTab {
  label: string;
  dimension: Dimension;
  /** The second number column after Visitors: pageviews, or sessions (`visits`) for entry and exit pages. */
  second: { metric: 'pageviews' | 'visits'; label: string };
}

export interface ListCard {
  title: string;
  tabs: ListTab[];
}

const pageviewsColumn = { metric: 'pageviews', label: 'Pageviews' } as const;
const tab = (label: string, dimension: Dimension, second: ListTab['second'] = pageviewsColumn): ListTab => ({
  label,
  dimension,
  second,
});

/** The cards and their tabs, as Plausible's dashboard has them (entry and exit pages are extensions of the API). */
export const cards: ListCard[] = [
  {
    title: 'Sources',
    tabs: [
      tab('Referrers', 'referrer'),
      tab('Source', 'utm_source'),
      tab('Medium', 'utm_medium'),
      tab('Campaign', 'utm_campaign'),
      tab('Content', 'utm_content'),
      tab('Term', 'utm_term'),
    ],
  },
  {
    title: 'Pages',
    tabs: [
      tab('Top pages', 'page'),
      tab('Entry pages', 'entry_page', { metric: 'visits', label: 'Entrances' }),
      tab('Exit pages', 'exit_page', { metric: 'visits', label: 'Exits' }),
    ],
  },
  { title: 'Locations', tabs: [tab('Countries', 'country'), tab('Regions', 'region'), tab('Cities', 'city')] },
  { title: 'Devices', tabs: [tab('Browsers', 'browser'), tab('OS', 'os'), tab('Size', 'device')] },
];
