import path from 'node:path';
import type { SharedRedis } from './redis.ts';
import type { Config } from '../config.ts';
import type { ClickHouse } from './clickhouse/port.ts';
import type { Postgres, Queryable } from './postgres/port.ts';
import { MIGRATION_LOCKS, applyRetention, migrateClickHouse, migratePostgres, migrationLock } from './migrations.ts';

export interface Stores {
  pg: Postgres;
  ch: ClickHouse;
  redis: SharedRedis | undefined;
  close(): Promise<void>;
}

/**
 * A data move between the stores that a schema change needs (rows leaving Postgres for
 * ClickHouse); run after both schemas are migrated, in the migration lock's transaction. Its SQL
 * belongs to the repo that owns the tables, so the caller passes it in.
 */
export type DataMove = (q: Queryable, ch: ClickHouse) => Promise<unknown>;

/**
 * Opens each store, embedded unless its URL is set, and brings both schemas up to date. A server
 * store's client (pg, @clickhouse/client, ioredis) is loaded only when its URL is set: the
 * embedded service does not carry them (~15 MB of RSS at start, docs/bench.md).
 */
export async function openStores(config: Config, moves: readonly DataMove[] = []): Promise<Stores> {
  const pg = config.databaseUrl
    ? await (await import('./postgres/pg.ts')).openPg(config.databaseUrl)
    : await (await import('./postgres/pglite.ts')).openPglite(path.join(config.dataDir, 'postgres'));
  const ch = config.clickhouse
    ? await (await import('./clickhouse/http.ts')).openClickHouseHttp({
        ...config.clickhouse,
        asyncInsert: config.clickhouseAsyncInsert,
      })
    : await (await import('./clickhouse/chdb.ts')).openChdb(path.join(config.dataDir, 'clickhouse'));
  try {
    await migratePostgres(pg);
    // Any number of API processes may start at once on one ClickHouse: its DDL has no lock of its
    // own, so its migrations run while this process holds a Postgres advisory lock.
    await pg.tx(async (q) => {
      await migrationLock(q, MIGRATION_LOCKS.clickhouse);
      await migrateClickHouse(ch, undefined, config.clickhouse?.cluster);
      await applyRetention(ch, config.retentionDays, config.clickhouse?.cluster);
      for (const move of moves) await move(q, ch);
    });
  } catch (err) {
    // A start-up that stops here (a failed migration, a refused server key) leaves the embedded
    // engines free for the next open in this process.
    await Promise.allSettled([ch.close(), pg.close()]);
    throw err;
  }
  const redis = config.redisUrl
    ? (await import('./redis.ts')).openRedis(config.redisUrl, config.redisCommandTimeoutMs)
    : undefined;
  return {
    pg,
    ch,
    redis,
    async close() {
      redis?.client.disconnect();
      await ch.close();
      await pg.close();
    },
  };
}
