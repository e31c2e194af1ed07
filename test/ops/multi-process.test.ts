import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import { ADMIN_TOKEN, tempDataDir } from '../helpers/server.ts';
import { ChildService, freePort } from '../reliability/child.ts';
import { createDatabase, dropDatabase } from '../../scripts/databases.ts';
import * as P from '../helpers/payloads.ts';
import { readMigrations } from '../../src/stores/migrations.ts';
import { sleep, waitFor } from '../helpers/wait.ts';
import { metricValue } from '../helpers/inspect.ts';
import { startClickHouseStandIn, type ClickHouseStandIn } from '../helpers/clickhouseStandIn.ts';

// Three API processes on one Postgres, one Redis and one ClickHouse endpoint (the chDB-backed
// HTTP stand-in), behind a round-robin TCP balancer made here: all three start at once on fresh
// stores (concurrent migrations), rate limits are shared, a key deactivation reaches every
// process within 5 s, and one process SIGKILLed under load loses and doubles nothing (counted
// through the export API). Needs the machine's Postgres and Redis: .ci/run's second pass sets
// DATABASE_URL and REDIS_URL; without them this file is skipped.

const servers = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const WHY = servers
  ? ''
  : ' (skipped: needs DATABASE_URL and REDIS_URL, a Postgres and a Redis server; .ci/run sets both in its second pass)';

/** Each new connection goes to the next live backend; a backend that refuses is skipped. */
class RoundRobin {
  private server = net.createServer((c) => this.accept(c, 0));
  private next = 0;
  port = 0;
  constructor(private readonly ports: number[]) {}
  async listen() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
  }
  private accept(client: net.Socket, tried: number) {
    client.on('error', () => {});
    if (tried >= this.ports.length) return client.destroy();
    const port = this.ports[this.next++ % this.ports.length]!;
    const up = net.connect({ host: '127.0.0.1', port });
    let connected = false;
    up.once('connect', () => {
      connected = true;
      client.pipe(up).pipe(client);
    });
    up.on('error', () => (connected ? client.destroy() : this.accept(client, tried + 1)));
    up.on('close', () => connected && client.destroy());
    client.on('close', () => up.destroy());
  }
  close() {
    this.server.close();
  }
}

let shim: ClickHouseStandIn | undefined;
let chUrl = '';
let procs: ChildService[] = [];
let spoolDir = '';
let lb: RoundRobin;
let base = '';
const dbName = `flightrec_mp_${randomBytes(4).toString('hex')}`;
const adminUrl = (process.env.DATABASE_URL ?? '').replace(/\/[^/]*$/, '/postgres');
const dbUrl = adminUrl.replace(/\/postgres$/, `/${dbName}`);

/** A request on its own connection, so the balancer spreads them. */
async function call(url: string, method: string, headers: Record<string, string>, body?: unknown) {
  const r = await fetch(url, {
    method,
    headers: { ...headers, connection: 'close', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, json: () => JSON.parse(text) };
}
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  if (!servers) return;
  await createDatabase(adminUrl, dbName);
  shim = await startClickHouseStandIn(tempDataDir());
  chUrl = shim.url;
  const ports = await Promise.all([freePort(), freePort(), freePort()]);
  const prefix = `flightrec-mp-${randomBytes(4).toString('hex')}`;
  // One spool volume: each process owns its directory in it; a survivor takes over a dead one's.
  spoolDir = `${tempDataDir()}/spool`;
  procs = ports.map(
    (port, i) =>
      new ChildService({
        DATA_DIR: tempDataDir(),
        PORT: String(port),
        ADMIN_TOKEN,
        LOG_LEVEL: 'warn',
        INGEST_SPOOL: 'true',
        SPOOL_DIR: spoolDir,
        SPOOL_LOCK_STALE_MS: '2000',
        DATABASE_URL: dbUrl,
        REDIS_URL: process.env.REDIS_URL!,
        REDIS_KEY_PREFIX: prefix,
        CLICKHOUSE_URL: chUrl,
        RATE_LIMIT_INGEST_PER_MIN: '1000000',
        RATE_LIMIT_EXPORT_PER_MIN: '1000000',
        RATE_LIMIT_AUTH_PER_MIN: '5',
        RUN_WORKER: i === 0 ? 'true' : 'false',
      }),
  );
  lb = new RoundRobin(ports);
  await lb.listen();
  base = `http://127.0.0.1:${lb.port}`;
}, 120_000);

afterAll(async () => {
  lb?.close();
  await Promise.all(procs.map((p) => p.stop('SIGTERM').catch(() => {})));
  shim?.child.kill();
  if (servers) await dropDatabase(adminUrl, dbName);
});

describe.skipIf(!servers)(`three API processes behind a balancer${WHY}`, () => {
  it('start at once on fresh stores: both schemas migrate once', async () => {
    await Promise.all(procs.map((p) => p.start(90_000)));
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    const applied = await db.query<{ version: number; n: number }>(
      'SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version ORDER BY version',
    );
    await db.end();
    expect(applied.rows.length).toBeGreaterThanOrEqual(4);
    expect(applied.rows.every((r) => r.n === 1)).toBe(true);
    // ClickHouse's runner recorded each migration once (no FINAL: a second run would be a second row)
    const ch = await fetch(
      `${chUrl}/?query=${encodeURIComponent('SELECT version, count() AS n FROM schema_migrations GROUP BY version ORDER BY version FORMAT JSONEachRow')}`,
    );
    const chRows = (await ch.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { version: number; n: number });
    expect(chRows.map((r) => [Number(r.version), Number(r.n)])).toEqual(
      readMigrations('clickhouse').map((m) => [m.version, 1]),
    );
    for (const p of procs) expect((await call(`${p.url}/health/ready`, 'GET', {})).status).toBe(200);
  }, 120_000);

  it('share one rate limit through Redis', async () => {
    // RATE_LIMIT_AUTH_PER_MIN=5 per IP: eight log-ins spread over three processes get five
    // answers and three 429s; counted per process they would all be answered.
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++)
      statuses.push(
        (await call(`${base}/api/auth/login`, 'POST', {}, { email: 'nobody@example.com', password: 'wrong password' }))
          .status,
      );
    // None counted in process: a loop held on a busy machine does not time out Redis's answers.
    const fallbacks = await Promise.all(
      procs.map(async (p) =>
        metricValue(
          await (await fetch(`${p.url}/metrics`)).text(),
          'flightrec_rate_limit_redis_fallbacks_total{limiter="auth"}',
        ),
      ),
    );
    expect(fallbacks).toEqual([0, 0, 0]);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    expect(statuses.slice(0, 5).every((s) => s !== 429)).toBe(true);
  });

  it('turn a deactivated key away on every process within 5 s', async () => {
    const created = await call(`${base}/api/projects`, 'POST', admin, { name: 'deactivation' });
    const projectId = created.json().project.id as string;
    const key = await call(`${base}/api/projects/${projectId}/keys`, 'POST', admin);
    const auth = { authorization: `Bearer ${key.json().apiKey}` };
    // every process has the key cached as valid
    for (const p of procs) expect((await call(`${p.url}/export/sessions`, 'GET', auth)).status).toBe(200);
    expect((await call(`${base}/api/keys/${key.json().key.id}/deactivate`, 'POST', admin)).status).toBe(200);
    // Each process refuses it once its cache entry (≤ 5 s) runs out or Redis tells it; the deadline
    // leaves a busy machine its slack rather than measuring a speed.
    await Promise.all(
      procs.map((p) =>
        waitFor(
          `${p.url} to refuse the key`,
          async () => (await call(`${p.url}/export/sessions`, 'GET', auth)).status === 401,
          20_000,
        ),
      ),
    );
  });

  it('lose and double nothing when one process is SIGKILLed under load', async () => {
    const created = await call(`${base}/api/projects`, 'POST', admin, { name: 'kill' });
    const auth = { authorization: `Bearer ${created.json().apiKey}` };
    const clients = 12;
    const stackTrace = `Error: kill test\n at ${randomUUID()} (k.js:1:1)`;
    // As the SDK does: a request that fails (connection cut, 5xx) is sent again, byte for byte.
    const send = async (path: string, body: unknown) => {
      for (let attempt = 0; attempt < 60; attempt++) {
        const status = await call(base + path, 'POST', auth, body).then(
          (r) => r.status,
          () => 0,
        );
        if (status >= 200 && status < 300) return;
        if (status >= 400 && status < 500 && status !== 429) throw new Error(`${path} answered ${status}`);
        await sleep(100);
      }
      throw new Error(`${path}: no success after 60 attempts`);
    };
    const sessions = Array.from({ length: clients }, () => P.sessionStart());
    for (const s of sessions) await send('/ingest/session', s);
    const sent = new Map<string, number>();
    let killed = false;
    const until = Date.now() + 8000;
    setTimeout(() => {
      killed = true;
      void procs[1]!.stop('SIGKILL');
    }, 3000);
    await Promise.all(
      sessions.map(async (s, c) => {
        let seq = 0;
        while (Date.now() < until) {
          const batch = {
            sessionId: s.sessionId,
            events: Array.from({ length: 20 }, (_, i) => P.navigate(s.sessionId, seq + i)),
          };
          await send('/ingest/events', batch);
          seq += 20;
        }
        // each client's crash, sent twice (a retry after a lost answer)
        const crash = P.crash(s.sessionId, { stackTrace, timestamp: P.T0 + c });
        await send('/ingest/crash', crash);
        await send('/ingest/crash', crash);
        sent.set(s.sessionId, seq);
      }),
    );
    expect(killed).toBe(true);
    // Acknowledged bodies are in the spools: loaded within seconds, the killed process's by a survivor.
    const totals = () =>
      Promise.all(
        sessions.map(
          async (s) =>
            (await call(`${base}/export/events?sessionId=${s.sessionId}&limit=1`, 'GET', auth)).json().total as number,
        ),
      );
    const expected = sessions.map((s) => sent.get(s.sessionId));
    let stored: number[] = [];
    await waitFor(
      'every acknowledged event to be exported',
      async () => {
        stored = await totals();
        return stored.every((n, c) => n === expected[c]);
      },
      20_000,
      200,
    ).catch(() => undefined);
    expect(stored).toEqual(expected);
    // the killed process's spool directory was taken over, loaded and removed: the survivors' remain
    // (a directory goes once its last segment is deleted, a moment after that segment's rows show)
    const spoolDirs = () =>
      fs.readdirSync(spoolDir).filter((d) => !d.startsWith('.') && fs.statSync(`${spoolDir}/${d}`).isDirectory());
    await waitFor('the killed process spool directory to be removed', () => spoolDirs().length === 2);
    // crash reports too go through the spool: counted once the loader has recorded them
    const groups = await waitFor(
      'every crash counted',
      async () => {
        const g = (await call(`${base}/export/crashes`, 'GET', auth)).json().data as { occurrenceCount: number }[];
        return g.length === 1 && g[0]!.occurrenceCount >= clients ? g : undefined;
      },
      30_000,
    );
    expect(groups.map((g) => g.occurrenceCount)).toEqual([clients]);
  }, 60_000);

  it("take over a killed process's unrecorded crash reports on a shared volume, each recorded once", async () => {
    const created = await call(`${base}/api/projects`, 'POST', admin, { name: 'crash takeover' });
    const projectId = created.json().project.id as string;
    const auth = { authorization: `Bearer ${created.json().apiKey}` };
    // A fourth process on the same volume that holds its crash segments for a minute: when it is
    // killed, its acknowledged reports are on disk only.
    const victim = new ChildService({
      DATA_DIR: tempDataDir(),
      PORT: String(await freePort()),
      ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      INGEST_SPOOL: 'true',
      SPOOL_DIR: spoolDir,
      SPOOL_LOCK_STALE_MS: '2000',
      SPOOL_LOAD_INTERVAL_MS: '60000',
      SPOOL_INSTANCE: 'victim',
      DATABASE_URL: dbUrl,
      REDIS_URL: process.env.REDIS_URL!,
      REDIS_KEY_PREFIX: `flightrec-mp-victim-${randomBytes(4).toString('hex')}`,
      CLICKHOUSE_URL: chUrl,
      RATE_LIMIT_INGEST_PER_MIN: '1000000',
      RUN_WORKER: 'false',
    });
    procs.push(victim);
    await victim.start(90_000);
    const sessions = Array.from({ length: 4 }, () => P.sessionStart());
    for (const s of sessions) expect((await call(`${victim.url}/ingest/session`, 'POST', auth, s)).status).toBe(201);
    const stacks = ['a', 'b', 'c'].map((g) => `Error: takeover ${g}\n at fn_${g} (${randomUUID()}.js:1:1)`);
    let sent = 0;
    for (const [i, s] of sessions.entries()) {
      for (const [g, stackTrace] of stacks.entries()) {
        const crash = P.crash(s.sessionId, { stackTrace, timestamp: P.T0 + i * 10 + g });
        expect((await call(`${victim.url}/ingest/crash`, 'POST', auth, crash)).status).toBe(201);
        expect((await call(`${victim.url}/ingest/crash`, 'POST', auth, crash)).status).toBe(201); // a retry
        sent++;
      }
    }
    const victimDir = `${spoolDir}/.crashes/victim`;
    expect(fs.readdirSync(victimDir).some((f) => f.endsWith('.seg'))).toBe(true);
    expect((await victim.stop('SIGKILL')).signal).toBe('SIGKILL');
    // a survivor takes the directory over, records every report, and removes it
    const groups = await waitFor(
      'the killed process reports recorded',
      async () => {
        type G = { id: string; occurrenceCount: number };
        const g = (await call(`${base}/export/crashes`, 'GET', auth)).json().data as G[];
        return g.length === stacks.length && g.every((x) => x.occurrenceCount === sessions.length) ? g : undefined;
      },
      30_000,
    );
    expect(groups.reduce((n, g) => n + g.occurrenceCount, 0)).toBe(sent);
    await waitFor('the killed process crash spool directory removed', () => !fs.existsSync(victimDir));
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    const jobs = await db.query<{ group_id: string }>(
      "SELECT group_id::text AS group_id FROM alert_outbox WHERE project_id = $1 AND kind = 'new_crash_group'",
      [projectId],
    );
    await db.end();
    expect(jobs.rows.map((j) => j.group_id).sort()).toEqual(groups.map((g) => g.id).sort());
  }, 120_000);
});
