import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedNetwork, StartedTestContainer } from 'testcontainers';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { SHARED_SECRETS_KEY } from '../helpers/isolatedDb.ts';
import { exercise, noDocker, startClickHouseCluster, startPostgres, startRedis } from './docker.ts';

// The clustered schema (CLICKHOUSE_CLUSTER) on two shards × two replicas with Keeper: the
// migrations run ON CLUSTER from empty, the traffic of the single-server suite counts every row
// once through the Distributed tables, rows are spread over both shards and copied to both
// replicas of each, and a second process starting at once finds nothing left to do.

const why = await noDocker();
if (why) console.warn(`test:containers skipped: ${why}`);

let containers: StartedTestContainer[] = [];
let network: StartedNetwork | undefined;
let env: Record<string, string> = {};
const servers: TestServer[] = [];

beforeAll(async () => {
  if (why) return;
  const [cluster, pg, redis] = await Promise.all([startClickHouseCluster(), startPostgres(), startRedis()]);
  network = cluster.network;
  containers = [...cluster.nodes, pg.container, redis.container];
  env = { ...cluster.env, DATABASE_URL: pg.url, REDIS_URL: redis.url, SECRETS_KEY: SHARED_SECRETS_KEY };
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await Promise.all(containers.map((c) => c.stop()));
  await network?.stop();
});

describe.skipIf(why !== null)(
  `a ClickHouse cluster of two shards × two replicas with Keeper${why ? ` (skipped: ${why})` : ''}`,
  () => {
    it('migrates ON CLUSTER from empty with two processes starting at once', async () => {
      servers.push(...(await Promise.all([startTestServer(env), startTestServer(env)])));
      const tables = await servers[0]!.svc.stores.ch.query<{ h: string; name: string; engine: string }>(
        `SELECT hostName() AS h, name, engine FROM clusterAllReplicas('flightrec', system.tables)
       WHERE database = currentDatabase() AND name IN ('events', 'events_local', 'ingest', 'ingest_local', 'events_ingest', 'crash_occurrences_local')`,
      );
      expect(new Set(tables.map((t) => t.h)).size).toBe(4);
      const engines = new Map(tables.map((t) => [t.name, t.engine]));
      expect(Object.fromEntries(engines)).toEqual({
        // 002's events_ingest was created and dropped on the way (004)
        events: 'Distributed',
        events_local: 'ReplicatedReplacingMergeTree',
        ingest: 'Distributed',
        ingest_local: 'Null',
        crash_occurrences_local: 'ReplicatedReplacingMergeTree',
      });
    });

    it('counts every row once through the Distributed tables, spread over both shards and on both replicas', async () => {
      const s = servers[0]!;
      await exercise(s);
      for (const table of ['events_local', 'network_logs_local', 'crash_occurrences_local']) {
        await s.svc.stores.ch
          .exec(`SYSTEM SYNC REPLICA ON CLUSTER 'flightrec' ${table}`)
          .catch(() => s.svc.stores.ch.exec(`SYSTEM SYNC REPLICA ${table}`));
        // hostName() is each node's (ch-s<shard>-r<replica>), evaluated where the rows are
        const perHost = await s.svc.stores.ch.query<{ h: string; n: number }>(
          `SELECT hostName() AS h, count() AS n FROM clusterAllReplicas('flightrec', currentDatabase(), ${table}) GROUP BY h`,
        );
        const byShard = new Map<string, number[]>();
        for (const r of perHost) {
          const shard = r.h.replace(/-r\d+$/, '');
          byShard.set(shard, [...(byShard.get(shard) ?? []), Number(r.n)]);
        }
        expect(byShard.size, table).toBe(2);
        for (const [shard, counts] of byShard) {
          expect(counts, `${table} shard ${shard}`).toHaveLength(2);
          expect(counts[0], `${table} replicas of shard ${shard}`).toBe(counts[1]);
        }
      }
    });
  },
);
