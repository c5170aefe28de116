import { isRowFieldDimension, isTimeDimension } from '../../requests/query.js';
import { isRevenueAggregate, type QueryPlan } from './plan.js';

// Which queries of a batch one statement can answer while reading each relation once (print-shared-scan.ts). Trino,
// and so Athena, reads a relation again at every reference, merged statements included (statement-batch.ts): a
// dashboard's cards over one range read the same pageview buckets and session fragments once per card. Queries of
// one shared scan are grouped by GROUPING SETS over one read of each relation, one set per query.

/**
 * The key of the queries `plan` may share a statement with, or null where it is printed alone: plans over the same
 * scope and the same row filters (a dashboard's view filters every card alike; no filter on visitors or session
 * pages), grouped by row attributes and local times (days, weeks, months, hours; no event or session page), their
 * row metrics (visitors, pageviews) from bucket relations counted by distinct visitor (each relation read once;
 * revenue and conversions from the kept revenue rows, read once for all), their session metrics from the session
 * fragments merged per session (never the session counts), picked by the kept rows or by their path lists. The
 * session sources of one scope are equal: they derive from the range and the catalog alone. Plans of one key answer
 * together unless two grouped alike read different sides (sharedScanGroups).
 */
export function sharedScanKey(plan: QueryPlan): string | null {
  const { rows, sessions, eventVisitors } = plan.sources;
  const byVisitorOrSession = plan.sessionFilters.length + plan.visitorFilters.length > 0;
  if (byVisitorOrSession || eventVisitors !== null || plan.sessionPages.length > 0) return null;
  if (!plan.dimensions.every((d) => isRowFieldDimension(d) || (isTimeDimension(d) && d !== 'minute'))) return null;
  if (rows && (rows.from !== 'buckets' || rows.visitors?.count === 'bitmaps')) return null;
  if (sessions && (sessions.from !== 'fragments' || sessions.counts)) return null;
  if (sessions?.from === 'fragments' && sessions.pick.by === 'paths' && sessions.pick.unlistedByRows) return null;
  if (!rows && !sessions) return null;
  return JSON.stringify({ scope: plan.scope, filters: plan.rowFilters });
}

/**
 * The plans of `plans` to answer together, as lists of their indexes: those of one sharedScanKey whose plans of the
 * same dimensions read the same sides (groupingSetOf); a list of one for every other plan. In the order of the plans'
 * first members. The scope names the range's zone, so the times of one key are in one zone.
 */
export function sharedScanGroups(plans: readonly QueryPlan[]): number[][] {
  const groups: number[][] = [];
  const open = new Map<string, { members: number[]; sets: Map<string, string> }>();
  plans.forEach((plan, i) => {
    const key = sharedScanKey(plan);
    const { set, sides } = groupingSetOf(plan);
    const group = key === null ? undefined : open.get(key);
    if (group && (group.sets.get(set) ?? sides) === sides) {
      group.members.push(i);
      group.sets.set(set, sides);
      return;
    }
    const members = [i];
    groups.push(members);
    if (key !== null && !group) open.set(key, { members, sets: new Map([[set, sides]]) });
  });
  return groups;
}

/**
 * The grouping set a plan's groups are read from in a shared scan: its dimensions in any order (`set`) and the sides
 * of the statement they come from (`sides`: row metrics, revenue, sessions). Plans grouped alike share a set only
 * where they read the same sides, as a side adds the groups only it holds; `key` tells sets apart.
 */
export function groupingSetOf(plan: QueryPlan): { set: string; sides: string; key: string } {
  const { rows, sessions } = plan.sources;
  const set = [...plan.dimensions].sort().join(',');
  const sides = [rows !== null, plan.rowAggregates.some(isRevenueAggregate), sessions !== null].join(',');
  return { set, sides, key: `${set}|${sides}` };
}
