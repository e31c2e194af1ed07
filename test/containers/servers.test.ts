import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedTestContainer } from 'testcontainers';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { SHARED_SECRETS_KEY } from '../helpers/isolatedDb.ts';
import { exercise, noDocker, startClickHouse, startPostgres, startRedis } from './docker.ts';

// The service on a real ClickHouse server, Postgres and Redis (one of each), through the same
// code paths as production: migrations from empty, ingestion with retries, every count through
// the export and management APIs, and a restart on the same stores.

const why = await noDocker();
if (why) console.warn(`test:containers skipped: ${why}`);

let containers: StartedTestContainer[] = [];
let env: Record<string, string> = {};
let s: TestServer | undefined;

beforeAll(async () => {
  if (why) return;
  const [ch, pg, redis] = await Promise.all([startClickHouse(), startPostgres(), startRedis()]);
  containers = [ch.container, pg.container, redis.container];
  env = {
    ...ch.env,
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    RETENTION_DAYS: '3650',
    SECRETS_KEY: SHARED_SECRETS_KEY,
  };
});
afterAll(async () => {
  await s?.close();
  await Promise.all(containers.map((c) => c.stop()));
});

describe.skipIf(why !== null)(
  `one ClickHouse server, Postgres and Redis in Docker${why ? ` (skipped: ${why})` : ''}`,
  () => {
    it('migrates from empty, ingests with retries, and counts every row once', async () => {
      s = await startTestServer(env);
      expect(s.svc.stores.ch.kind).toBe('http');
      await exercise(s);
    });

    it('starts again on the same stores with nothing to migrate and the data as it was', async () => {
      await s!.close();
      s = await startTestServer(env);
      const [m] = await s.svc.stores.ch.query<{ n: number }>('SELECT count() AS n FROM schema_migrations FINAL');
      expect(Number(m!.n)).toBeGreaterThanOrEqual(3);
      const [ttl] = await s.svc.stores.ch.query<{ q: string }>(
        "SELECT create_table_query AS q FROM system.tables WHERE database = currentDatabase() AND name = 'crash_occurrences'",
      );
      expect(ttl!.q).toMatch(/TTL toDateTime\(occurred_at\) \+ toIntervalDay\(3650\)/);
      await exercise(s);
    });
  },
);
