// npm records in package-lock.json only the optional packages its registry can resolve. The
// registry this project is developed against lacks chDB's engine builds for the platforms other
// than linux-x64, so `npm install` leaves them out and a later `npm ci` refuses the lock file
// ("Missing: @chdb/lib-darwin-arm64 from lock file"). This puts them back (platform-tagged, so
// npm skips them on other machines). Run it after any `npm install` that rewrites the lock file.
import fs from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(fs.readFileSync(LOCK, 'utf8'));
const chdb = lock.packages['node_modules/chdb'];
if (!chdb?.optionalDependencies) {
  console.error('chdb is not in package-lock.json');
  process.exit(1);
}
const PLATFORMS: Record<string, Record<string, string[]>> = {
  '@chdb/lib-darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  '@chdb/lib-darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  '@chdb/lib-linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  '@chdb/lib-linux-x64-gnu': { os: ['linux'], cpu: ['x64'], libc: ['glibc'] },
};
let added = 0;
for (const [name, version] of Object.entries(chdb.optionalDependencies as Record<string, string>)) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  lock.packages[key] = { version, license: 'Apache-2.0', optional: true, ...(PLATFORMS[name] ?? {}) };
  added++;
}
const sorted: Record<string, unknown> = {};
for (const k of Object.keys(lock.packages).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)))
  sorted[k] = lock.packages[k];
lock.packages = sorted;
fs.writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(
  added
    ? `added ${added} chDB platform entries to package-lock.json`
    : 'package-lock.json already lists every chDB platform',
);
