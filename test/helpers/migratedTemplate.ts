// Run by test/globalSetup.ts in a process of its own (chDB binds one data directory per process,
// and the vitest main process must not hold one): opens both embedded stores on <dir> as every
// start-up does (src/stores/index.ts: migrations under their lock, no retention), then closes
// them, leaving <dir>/postgres and <dir>/clickhouse migrated for test servers to copy.
// <dir>/postgres may already hold an initdb'd cluster; it is migrated in place.
import { openStores } from '../../src/stores/index.ts';
import { loadConfig } from '../../src/config.ts';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node --import tsx test/helpers/migratedTemplate.ts <dataDir>');
  process.exit(2);
}
// Only the data directory matters: no store URL, so both stores are the embedded ones.
const stores = await openStores(loadConfig({ DATA_DIR: dir }));
await stores.close();
