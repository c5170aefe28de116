// Calendar days as the API, the store's `dt` folders and the time-zone arithmetic write them: `YYYY-MM-DD`.

/** Whether `value` is a real date written `YYYY-MM-DD` (no 2026-02-30, no five-digit or signed years). */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === value;
}
