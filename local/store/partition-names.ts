import { domainSchema } from '../../shared/requests/fields.js';
import { EVENT_DAYS } from '../../shared/events/event-validation.js';
import { isCalendarDate } from '../../shared/time/calendar-date.js';

// The partition folder names writers make: `domain=<lower-case host>` and `dt=<YYYY-MM-DD>` of a day inside the
// window events may have. Readers read partitions through hive partitioning, which casts every `dt` to a date:
// one folder with another name would fail every query of every domain, so snapshots leave such folders out.

export function isDomainFolder(name: string): boolean {
  return name.startsWith('domain=') && domainSchema.safeParse(name.slice('domain='.length)).success;
}

export function isDayFolder(name: string): boolean {
  const day = name.slice('dt='.length);
  return name.startsWith('dt=') && isCalendarDate(day) && day >= EVENT_DAYS.first && day <= EVENT_DAYS.last;
}
