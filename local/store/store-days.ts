import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { widenDomainDays, type DomainDays } from '../../shared/store/domain-days-repo.js';
import { recordLayout } from '../../shared/store/file-states-repo.js';
import { STORE_LAYOUT } from '../../shared/events/store-layout.js';
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

/**
 * Records `domains` (by default every domain of the snapshot at `paths`) at the current layout: true of a snapshot
 * the upgrade or an import's transaction published, which derive every outdated file again. Read by the Athena path
 * over the local store (`ANALYTICS_ENGINE=trino`), which plans a domain by its recorded layout as on S3.
 */
export async function recordStoreLayout(paths: LocalPaths, domains = domainsUnder(paths.eventsDir)): Promise<void> {
  for (const domain of domains) await recordLayout(domain, STORE_LAYOUT);
}
