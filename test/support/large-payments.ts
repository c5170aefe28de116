// Payments of the largest amount an event may carry (2^53 - 1 cents), for the suites that hold revenue past the
// 64-bit range: 1,024 of them sum past 2^63 - 1.

export const LARGEST_AMOUNT = Number.MAX_SAFE_INTEGER;

/**
 * `count` revenue events of `domain` on `day`, one second apart from 10:00:00 UTC plus `from` seconds, numbered
 * from `from` (transaction ids `t<n>`), each by `visitor(n)`.
 */
export function largePayments(options: {
  domain: string;
  day: string;
  count: number;
  from?: number;
  visitor?: (n: number) => string;
  /** More fields of payment `n`. */
  extra?: (n: number) => Record<string, unknown>;
}): Record<string, unknown>[] {
  const { domain, day, count, from = 0, visitor = () => 'w', extra = () => ({}) } = options;
  return Array.from({ length: count }, (_, i) => {
    const n = from + i;
    const at = new Date(Date.parse(`${day}T10:00:00Z`) + n * 1000).toISOString();
    return {
      domain,
      timestamp: at,
      type: 'revenue',
      visitor_id: visitor(n),
      transaction_id: `t${n}`,
      amount_cents: LARGEST_AMOUNT,
      currency: 'USD',
      revenue_event: 'payment',
      ...extra(n),
    };
  });
}
