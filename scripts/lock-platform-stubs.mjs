// The npm registry reachable here serves native packages only for some platforms, so `npm install` leaves the
// others' optional platform packages out of package-lock.json, and `npm ci` then refuses the lock as out of
// sync. This adds a lock entry, with the os/cpu/libc its name states, for every optional platform package the
// lock lacks; npm ci skips them on platforms they do not fit, exactly as with a lock written elsewhere.
// Run after `npm install` changes the lock: `node scripts/lock-platform-stubs.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const cpus = ['arm64', 'x64', 'ia32', 'arm', 'loong64', 'ppc64', 'riscv64', 's390x'];
const systems = {
  darwin: 'darwin',
  linux: 'linux',
  win32: 'win32',
  android: 'android',
  freebsd: 'freebsd',
  openbsd: 'openbsd',
  openharmony: 'openharmony',
};

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => p in systems);
  const cpu = parts.find((p) => cpus.includes(p));
  if (!os || !cpu) return null;
  const libc = parts.includes('musl') || parts.includes('musleabihf') ? 'musl' : os === 'linux' ? 'glibc' : null;
  return { os: [os], cpu: [cpu], ...(libc ? { libc: [libc] } : {}) };
}

let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    if (lock.packages[key] || lock.packages[`${path}/node_modules/${dep}`]) continue;
    const platform = platformOf(dep);
    if (!platform) continue;
    lock.packages[key] = { version, ...platform, optional: true };
    added += 1;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} platform entries`);
