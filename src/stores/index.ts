import path from 'node:path';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { ClickHouse } from './clickhouse/port.ts';
import type { Postgres } from './postgres/port.ts';
import { migrateClickHouse, migratePostgres } from './migrations.ts';
import { openRedis } from './redis.ts';

export interface Stores {
  pg: Postgres;
  ch: ClickHouse;
  redis: Redis | undefined;
  close(): Promise<void>;
}

/** Opens each store, embedded unless its URL is set, and brings both schemas up to date. */
export async function openStores(config: Config): Promise<Stores> {
  const pg = config.databaseUrl
    ? await (await import('./postgres/pg.ts')).openPg(config.databaseUrl)
    : await (await import('./postgres/pglite.ts')).openPglite(path.join(config.dataDir, 'postgres'));
  const ch = config.clickhouse
    ? await (await import('./clickhouse/http.ts')).openClickHouseHttp(config.clickhouse)
    : await (await import('./clickhouse/chdb.ts')).openChdb(path.join(config.dataDir, 'clickhouse'));
  await migratePostgres(pg);
  await migrateClickHouse(ch);
  const redis = config.redisUrl ? openRedis(config.redisUrl) : undefined;
  return {
    pg,
    ch,
    redis,
    async close() {
      redis?.disconnect();
      await ch.close();
      await pg.close();
    },
  };
}
