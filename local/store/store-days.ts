import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { widenDomainDays, type DomainDays } from '../../shared/store/domain-days-repo.js';
import { isDayFolder } from './partition-names.js';
import { domainsUnder, type LocalPaths } from './paths.js';

/** The first and last `dt=` folder of `domain`'s events in the snapshot at `paths`, if it has any. */
export function storedDaysOf(paths: LocalPaths, domain: string): DomainDays | undefined {
  const dir = join(paths.eventsDir, `domain=${domain}`);
  if (!existsSync(dir)) return undefined;
  const days = readdirSync(dir)
    .filter(isDayFolder)
    .map((name) => name.slice('dt='.length))
    .sort();
  return days.length ? { firstDay: days[0]!, lastDay: days[days.length - 1]! } : undefined;
}

/**
 * Records each domain's days as the current snapshot holds them, for a store whose files were written before
 * writers recorded days; recording only widens, so running it again changes nothing.
 */
export async function recordStoreDays(paths: LocalPaths): Promise<void> {
  for (const domain of domainsUnder(paths.eventsDir)) {
    const days = storedDaysOf(paths, domain);
    if (days) await widenDomainDays(domain, days.firstDay, days.lastDay);
  }
}
