/**
 * Real servers in Docker for `npm run test:containers` (testcontainers): ClickHouse, Postgres,
 * Redis, and a ClickHouse cluster of two shards × two replicas with Keeper. Without a Docker
 * daemon the suites skip and say why.
 */
import {
  GenericContainer,
  Network,
  Wait,
  getContainerRuntimeClient,
  type StartedNetwork,
  type StartedTestContainer,
} from 'testcontainers';
import { expect } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { TestServer } from '../helpers/server.ts';
import * as P from '../helpers/payloads.ts';

export const IMAGES = { clickhouse: 'clickhouse/clickhouse-server:25.8', postgres: 'postgres:16', redis: 'redis:7' };

/** Why the suites cannot run here, or null when a container runtime answers. */
export async function noDocker(): Promise<string | null> {
  try {
    await getContainerRuntimeClient();
    return null;
  } catch (err) {
    return `no container runtime (${err instanceof Error ? err.message : String(err)}): these suites need Docker`;
  }
}

export async function startPostgres(): Promise<{ container: StartedTestContainer; url: string }> {
  const container = await new GenericContainer(IMAGES.postgres)
    .withEnvironment({ POSTGRES_USER: 'flightrec', POSTGRES_PASSWORD: 'flightrec', POSTGRES_DB: 'flightrec' })
    .withExposedPorts(5432)
    // the image starts the server twice (init, then for real): the second "ready" is the one
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  return {
    container,
    url: `postgres://flightrec:flightrec@${container.getHost()}:${container.getMappedPort(5432)}/flightrec`,
  };
}

export async function startRedis(): Promise<{ container: StartedTestContainer; url: string }> {
  const container = await new GenericContainer(IMAGES.redis)
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
    .start();
  return { container, url: `redis://${container.getHost()}:${container.getMappedPort(6379)}` };
}

export async function startClickHouse(): Promise<{ container: StartedTestContainer; env: Record<string, string> }> {
  const container = await new GenericContainer(IMAGES.clickhouse)
    .withEnvironment({ CLICKHOUSE_DB: 'flightrec', CLICKHOUSE_USER: 'flightrec', CLICKHOUSE_PASSWORD: 'flightrec' })
    .withExposedPorts(8123)
    .withWaitStrategy(Wait.forHttp('/ping', 8123))
    .start();
  return {
    container,
    env: {
      CLICKHOUSE_URL: `http://${container.getHost()}:${container.getMappedPort(8123)}`,
      CLICKHOUSE_USER: 'flightrec',
      CLICKHOUSE_PASSWORD: 'flightrec',
      CLICKHOUSE_DATABASE: 'flightrec',
    },
  };
}

const NODES = [
  { host: 'ch-s1-r1', shard: '01' },
  { host: 'ch-s1-r2', shard: '01' },
  { host: 'ch-s2-r1', shard: '02' },
  { host: 'ch-s2-r2', shard: '02' },
];

/** Each node's config.d: the cluster, its macros, Keeper (run by the first node), DDL queue. */
function nodeConfig(node: (typeof NODES)[number]): string {
  const shard = (n: string) =>
    `<shard><internal_replication>true</internal_replication>${NODES.filter((x) => x.shard === n)
      .map((x) => `<replica><host>${x.host}</host><port>9000</port></replica>`)
      .join('')}</shard>`;
  const keeper =
    node.host === 'ch-s1-r1'
      ? `<keeper_server><tcp_port>9181</tcp_port><server_id>1</server_id>
         <log_storage_path>/var/lib/clickhouse/coordination/log</log_storage_path>
         <snapshot_storage_path>/var/lib/clickhouse/coordination/snapshots</snapshot_storage_path>
         <raft_configuration><server><id>1</id><hostname>ch-s1-r1</hostname><port>9234</port></server></raft_configuration>
       </keeper_server>`
      : '';
  return `<clickhouse>
  <listen_host>0.0.0.0</listen_host>
  <remote_servers><flightrec>${shard('01')}${shard('02')}</flightrec></remote_servers>
  <macros><shard>${node.shard}</shard><replica>${node.host}</replica></macros>
  <zookeeper><node><host>ch-s1-r1</host><port>9181</port></node></zookeeper>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
  ${keeper}
</clickhouse>`;
}

/** Two shards × two replicas on one Docker network; the service talks to the first node. */
export async function startClickHouseCluster(): Promise<{
  network: StartedNetwork;
  nodes: StartedTestContainer[];
  env: Record<string, string>;
}> {
  const network = await new Network().start();
  const nodes = await Promise.all(
    NODES.map((n) =>
      new GenericContainer(IMAGES.clickhouse)
        .withNetwork(network)
        .withNetworkAliases(n.host)
        .withHostname(n.host)
        // the default user without a password keeps its network access: the nodes query each other as it
        .withEnvironment({ CLICKHOUSE_SKIP_USER_SETUP: '1' })
        .withCopyContentToContainer([{ content: nodeConfig(n), target: '/etc/clickhouse-server/config.d/cluster.xml' }])
        .withExposedPorts(8123)
        .withWaitStrategy(Wait.forHttp('/ping', 8123))
        .start(),
    ),
  );
  const first = nodes[0]!;
  return {
    network,
    nodes,
    env: { CLICKHOUSE_URL: `http://${first.getHost()}:${first.getMappedPort(8123)}`, CLICKHOUSE_CLUSTER: 'flightrec' },
  };
}

/**
 * The same traffic on any deployment: sessions on many devices (so on both shards), event and
 * network batches and crash reports each sent twice (an SDK retry), then every count through
 * the export and management APIs: each row once.
 */
export async function exercise(s: TestServer): Promise<void> {
  const p = await s.createProject('containers');
  const post = async (url: string, payload: unknown) => {
    const r = await s.app.inject({ method: 'POST', url, headers: p.auth, payload: payload as object });
    expect(r.statusCode, `${url}: ${r.body}`).toBeLessThan(300);
  };
  const stackTrace = `Error: containers\n at ${randomUUID()} (c.js:1:1)`;
  const sessions = Array.from({ length: 16 }, (_, i) => {
    const st = P.sessionStart();
    (st.device as Record<string, unknown>).model = `model ${i % 4}`;
    return st;
  });
  for (const [i, st] of sessions.entries()) {
    await post('/ingest/session', st);
    const events = {
      sessionId: st.sessionId,
      events: Array.from({ length: 30 }, (_, n) =>
        n % 3 === 0 ? P.networkEvent(st.sessionId, n, 500) : P.navigate(st.sessionId, n),
      ),
    };
    const network = { sessionId: st.sessionId, requests: [P.networkRequest(), P.networkRequest()] };
    const crash = P.crash(st.sessionId, { stackTrace, timestamp: P.T0 + i });
    for (let twice = 0; twice < 2; twice++) {
      await post('/ingest/events', events);
      await post('/ingest/network', network);
      await post('/ingest/crash', crash);
    }
    await post('/ingest/session/end', { sessionId: st.sessionId, endedAt: P.T0 + 60_000 });
  }
  const get = async (url: string) => {
    const r = await s.app.inject({ method: 'GET', url, headers: p.auth });
    expect(r.statusCode, `${url}: ${r.body}`).toBe(200);
    return r.json();
  };
  expect((await get('/export/sessions?limit=100')).total).toBe(16);
  for (const st of sessions) {
    expect((await get(`/export/events?sessionId=${st.sessionId}&limit=1`)).total).toBe(30);
  }
  // 10 mirrored network events and 2 requests per session
  expect((await get('/export/network?limit=1')).total).toBe(16 * 12);
  const crashes = await get('/export/crashes');
  expect(crashes.data).toHaveLength(1);
  expect(crashes.data[0]).toMatchObject({ occurrenceCount: 16, affectedDevices: 4 });
  const view = await s.app.inject({
    method: 'GET',
    url: `/api/projects/${p.projectId}/crash-groups/${crashes.data[0].id}`,
    headers: s.admin,
  });
  expect(view.json()).toMatchObject({ occurrenceCount: 16, status: 'open' });
}
