// How numbers read on the dashboard: counts grouped by thousands, rates with one decimal, durations as minutes and
// seconds, cents as money. The tests read the same formatted text back, so they go through these too.

const count = new Intl.NumberFormat('en-US');
const decimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1, minimumFractionDigits: 1 });

export type MetricName =
  'visitors' | 'pageviews' | 'bounce_rate' | 'avg_session_duration' | 'revenue' | 'conversions' | 'conversion_rate';

export const metricLabels: Record<MetricName, string> = {
  visitors: 'Visitors',
  pageviews: 'Pageviews',
  bounce_rate: 'Bounce rate',
  avg_session_duration: 'Visit duration',
  revenue: 'Revenue',
  conversions: 'Conversions',
  conversion_rate: 'Conversion rate',
};

export function formatMetric(metric: MetricName, value: number): string {
  switch (metric) {
    case 'bounce_rate':
    case 'conversion_rate':
      return `${decimal.format(value)}%`;
    case 'avg_session_duration':
      return formatDuration(value);
    case 'revenue':
      return formatCents(value);
    default:
      return count.format(value);
  }
}

export function formatCount(value: number): string {
  return count.format(value);
}

export function formatDuration(seconds: number): string {
  const total = Math.round(seconds);
  const minutes = Math.floor(total / 60);
  return minutes > 0 ? `${minutes}m ${total % 60}s` : `${total}s`;
}

export function formatCents(cents: number, currency = 'USD'): string {
  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(cents / 100);
}

/** The change from `before` to `now` as a signed percentage, or null when there was nothing before. */
export function change(now: number, before: number): number | null {
  if (before === 0) return null;
  return ((now - before) / before) * 100;
}
