import type { EventScope } from '../query/scope/event-scope.js';
import { printEventList, printEventPropertyKeys, printEventPropertyValues } from '../query/events/print.js';
import { rangeOfDates, resolveDateRange, type Preset } from '../time/date-range.js';
import { EngineRunner } from './engine-runner.js';
import { bytes } from './query.js';

// The custom-event endpoints take no time zone: presets and start/end are UTC dates (docs/API.md).

export interface EventsWindow {
  period: Preset;
  start?: string;
  end?: string;
  limit: number;
}

async function scopeOf(
  runner: EngineRunner,
  domain: string,
  window: EventsWindow,
  now: Date,
): Promise<EventScope & { dates: [string, string] }> {
  const range =
    window.start && window.end
      ? rangeOfDates(window.start, window.end, 'UTC')
      : await resolveDateRange(window.period, 'UTC', now, () => runner.firstEventAt(domain, false));
  return { domain, isDev: false, range, dates: [range.start, range.end] };
}

export async function listCustomEvents(domain: string, window: EventsWindow, now = new Date()) {
  const runner = await EngineRunner.forDomain(domain);
  const scope = await scopeOf(runner, domain, window, now);
  const rows = await runner.rows(printEventList(scope, window.limit, runner.target));
  return {
    data: rows.map((r) => ({
      name: String(r.name),
      count: Number(r.count),
      visitors: Number(r.visitors),
      has_properties: r.has_properties === true,
    })),
    meta: { domain, date_range: scope.dates, query_ms: runner.queryMs, ...bytes(runner) },
  };
}

export async function listEventPropertyKeys(domain: string, event: string, window: EventsWindow, now = new Date()) {
  const runner = await EngineRunner.forDomain(domain);
  const scope = await scopeOf(runner, domain, window, now);
  const rows = await runner.rows(printEventPropertyKeys(scope, event, window.limit, runner.target));
  return {
    data: rows.map((r) => String(r.key)),
    meta: { domain, event, date_range: scope.dates, query_ms: runner.queryMs, ...bytes(runner) },
  };
}

export async function listEventPropertyValues(
  domain: string,
  event: string,
  key: string,
  window: EventsWindow & { includeRevenue: boolean },
  now = new Date(),
) {
  const runner = await EngineRunner.forDomain(domain);
  const scope = await scopeOf(runner, domain, window, now);
  const rows = await runner.rows(
    printEventPropertyValues(scope, event, key, window.limit, window.includeRevenue, runner.target),
  );
  return {
    data: rows.map((r) => ({
      value: String(r.value),
      count: Number(r.count),
      visitors: Number(r.visitors),
      ...(window.includeRevenue ? { revenue: Number(r.revenue) } : {}),
    })),
    meta: { domain, event, property: key, date_range: scope.dates, query_ms: runner.queryMs, ...bytes(runner) },
  };
}
