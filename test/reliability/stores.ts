import path from 'node:path';
import type { ClickHouse } from '../../src/stores/clickhouse/port.ts';
import type { Postgres } from '../../src/stores/postgres/port.ts';

/**
 * Opens a stopped service's stores in the test process, to check what it committed without
 * the export API: chDB and PGlite from its DATA_DIR, or the Postgres of DATABASE_URL.
 * Only one chDB directory per process, so the caller must not run an in-process server too.
 */
export async function openServiceStores(
  dataDir: string,
  databaseUrl?: string,
): Promise<{ pg: Postgres; ch: ClickHouse; close(): Promise<void> }> {
  const pg = databaseUrl
    ? await (await import('../../src/stores/postgres/pg.ts')).openPg(databaseUrl)
    : await (await import('../../src/stores/postgres/pglite.ts')).openPglite(path.join(dataDir, 'postgres'));
  const ch = await (await import('../../src/stores/clickhouse/chdb.ts')).openChdb(path.join(dataDir, 'clickhouse'));
  return {
    pg,
    ch,
    async close() {
      await ch.close();
      await pg.close();
    },
  };
}
