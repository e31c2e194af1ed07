import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { countRows, crashGroups } from '../helpers/inspect.ts';
import * as P from '../helpers/payloads.ts';
import { freePort } from './child.ts';
import { TcpProxy } from './tcpProxy.ts';
import { createDatabase, dropDatabase } from '../../scripts/databases.ts';
import { sleep, waitFor } from '../helpers/wait.ts';

// Issue 6, item 2: a store goes away mid-load and comes back. One in-process server for the
// file: embedded ClickHouse (fault injected at the port), Postgres through a TCP proxy to a
// scratch database, and its own redis-server (never the machine's).
const PG_ADMIN = (process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test').replace(
  /\/[^/]*$/,
  '/postgres',
);
const SCRATCH = `flightrec_rel_${randomBytes(4).toString('hex')}`;

async function postgresReachable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_ADMIN, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}
const pgUp = await postgresReachable();

class OwnRedis {
  proc: ChildProcess | undefined;
  constructor(readonly port: number) {}
  async start() {
    this.proc = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const probe = new Redis({
      port: this.port,
      host: '127.0.0.1',
      lazyConnect: true,
      retryStrategy: () => 100,
      maxRetriesPerRequest: null,
    });
    probe.on('error', () => {});
    await probe.connect().catch(() => {});
    for (let i = 0; i < 100; i++) {
      if ((await probe.ping().catch(() => '')) === 'PONG') break;
      await sleep(50);
    }
    probe.disconnect();
  }
  async stop() {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    await new Promise((r) => {
      p.once('exit', r);
      p.kill('SIGKILL');
    });
  }
}

let s: TestServer;
let auth: { authorization: string };
let projectId: string;
let proxy: TcpProxy;
let redis: OwnRedis;
let redisProxy: TcpProxy;

beforeAll(async () => {
  if (!pgUp) return;
  await createDatabase(PG_ADMIN, SCRATCH);
  proxy = new TcpProxy({ host: '127.0.0.1', port: 5432 });
  await proxy.listen();
  redis = new OwnRedis(await freePort());
  await redis.start();
  redisProxy = new TcpProxy({ host: '127.0.0.1', port: redis.port });
  await redisProxy.listen();
  s = await startTestServer(
    {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/${SCRATCH}`,
      REDIS_URL: `redis://127.0.0.1:${redisProxy.port}`,
      RATE_LIMIT_INGEST_PER_MIN: '1000000',
    },
    undefined,
    undefined,
    // Reads go on while a store is away, with bodies spooled.
    { readAfterSettled: false },
  );
  ({ auth, projectId } = await s.createProject('outage'));
});

afterAll(async () => {
  await s?.close();
  await proxy?.close();
  await redisProxy?.close();
  await redis?.stop();
  if (pgUp) await dropDatabase(PG_ADMIN, SCRATCH);
});

const post = (url: string, payload: unknown) =>
  s.app.inject({ method: 'POST', url, headers: auth, payload: payload as object });

async function newSession() {
  const body = P.sessionStart();
  const r = await post('/ingest/session', body);
  expect(r.statusCode).toBe(201);
  return body.sessionId;
}

/** One SDK-shaped round on a session: events (with network ones), a network batch, a crash, an end. */
function round(sid: string, seq: number) {
  return [
    post('/ingest/events', {
      sessionId: sid,
      events: [P.navigate(sid, seq), P.networkEvent(sid, seq + 1, 503), P.tapEvent(sid, seq + 2)],
    }),
    post('/ingest/network', { sessionId: sid, requests: [P.networkRequest()] }),
  ];
}

const retryable = (code: number) => code === 500 || code === 503;
/** The body of a retryable answer: a 500's code, or a 503's (the ingest queue is full). */
const retryBody = (status: number) => ({
  error: expect.any(String),
  code: status === 500 ? 'internal_error' : 'queue_full',
});

describe.skipIf(!pgUp)('a store goes away', () => {
  it('Redis killed mid-load: ingestion keeps answering 2xx, and uses Redis again when it returns', async () => {
    const sid = await newSession();
    const codes: number[] = [];
    let seq = 0;
    const client = new Redis({ port: redis.port, host: '127.0.0.1' });
    client.on('error', () => {});
    // The limiter counts in Redis once its client is connected (until then a request is counted
    // in process): ingest until a request has been counted there.
    await waitFor('the ingest limiter key', async () => {
      seq += 1;
      expect((await post('/ingest/events', { sessionId: sid, events: [P.customEvent(sid, seq)] })).statusCode).toBe(
        201,
      );
      return (await client.keys(`${s.svc.config.redisKeyPrefix}:rl:ingest*`)).length > 0;
    });
    client.disconnect();

    await redis.stop();
    const t0 = Date.now();
    while (Date.now() - t0 < 3000) {
      seq += 3;
      for (const r of await Promise.all(round(sid, seq))) codes.push(r.statusCode);
      const limited = await post('/ingest/session', P.sessionStart());
      codes.push(limited.statusCode);
      expect(Number(limited.headers['ratelimit-remaining'])).toBeLessThan(1_000_000); // the in-process limiter counts
    }
    expect(codes.length).toBeGreaterThan(10);
    expect(codes.filter((c) => c < 200 || c > 299)).toEqual([]);

    await redis.start(); // same port, empty: it lost its counters
    const back = new Redis({ port: redis.port, host: '127.0.0.1' });
    back.on('error', () => {});
    let keys: string[] = [];
    for (let i = 0; i < 60 && keys.length === 0; i++) {
      seq += 3;
      const r = await post('/ingest/events', { sessionId: sid, events: [P.customEvent(sid, seq)] });
      expect(r.statusCode).toBe(201);
      keys = await back.keys(`${s.svc.config.redisKeyPrefix}:rl:ingest*`);
      if (!keys.length) await sleep(250);
    }
    back.disconnect();
    expect(keys.length).toBeGreaterThan(0); // the limiter reconnected without a restart
  });

  it('Redis partitioned (connection open, no answers): still 2xx, each request delayed at most by the command timeout', async () => {
    const sid = await newSession();
    redisProxy.cut('freeze');
    const codes: number[] = [];
    const times: number[] = [];
    try {
      for (let i = 0; i < 6; i++) {
        const t0 = Date.now();
        const r = await post('/ingest/events', { sessionId: sid, events: [P.customEvent(sid, i)] });
        times.push(Date.now() - t0);
        codes.push(r.statusCode);
      }
    } finally {
      redisProxy.restore();
    }
    console.log('redis partition: answers', codes.join(','), 'in ms', times.join(','));
    expect(codes).toEqual(codes.map(() => 201));
    expect(Math.max(...times)).toBeLessThan(3000);
    // and back: once the client reconnects, requests are fast again
    let fast = false;
    for (let i = 0; i < 40 && !fast; i++) {
      const t0 = Date.now();
      expect((await post('/ingest/events', { sessionId: sid, events: [P.customEvent(sid, 100 + i)] })).statusCode).toBe(
        201,
      );
      fast = Date.now() - t0 < 100;
      if (!fast) await sleep(250);
    }
    expect(fast).toBe(true);
  });

  it('Postgres cut off: retryable 5xx with {error}, nothing half-written, recovery without a restart', async () => {
    const sid = await newSession();
    const crash = P.crash(sid);
    const fresh = await s.createProject('never used before the outage');
    const before = {
      events: await countRows(s, 'events', projectId),
      network: await countRows(s, 'network_logs', projectId),
    };

    for (const mode of ['refuse', 'blackhole', 'freeze'] as const) {
      // warm the pool, so 'freeze' catches connections that are open and idle
      await Promise.all([1, 2, 3].map(() => s.svc.stores.pg.query('SELECT pg_sleep(0.05)')));
      proxy.cut(mode);
      const t0 = Date.now();
      const other = P.sessionStart();
      const answers = await Promise.all([
        post('/ingest/session', other),
        post('/ingest/crash', crash),
        post('/ingest/session/end', { sessionId: other.sessionId, endedAt: P.T0 + 1 }),
        // a new session id: the events route must look it up in Postgres
        post('/ingest/events', { sessionId: other.sessionId, events: [P.navigate(other.sessionId, 0)] }),
        s.app.inject({ method: 'GET', url: '/health' }),
        // a key this process has not cached: its lookup fails, which must not look like a bad key (401)
        s.app.inject({ method: 'POST', url: '/ingest/session', headers: fresh.auth, payload: P.sessionStart() }),
      ]);
      const elapsed = Date.now() - t0;
      console.log(`postgres ${mode}: answered ${answers.map((r) => r.statusCode).join(',')} in ${elapsed} ms`);
      for (const r of [answers[0], answers[2], answers[3]]) {
        expect(retryable(r.statusCode), `${mode}: ${r.statusCode} ${r.body}`).toBe(true);
        expect(r.json()).toEqual(retryBody(r.statusCode));
      }
      // A crash whose session this process has cached is spooled and acknowledged (the pipeline
      // records it once Postgres is back); one whose session must be read fails retryable. Either
      // way it is counted once below, with its retries.
      const crashAnswer = answers[1];
      if (crashAnswer.statusCode !== 201) {
        expect(retryable(crashAnswer.statusCode), `${mode}: crash ${crashAnswer.body}`).toBe(true);
        expect(crashAnswer.json()).toEqual(retryBody(crashAnswer.statusCode));
      }
      expect(answers[4]!.statusCode).toBe(503);
      expect(answers[5]!.statusCode, answers[5]!.body).toBe(500);
      expect(answers[5]!.json()).toEqual(retryBody(500));
      // A partitioned database must not pin requests: they fail within the pool/query timeouts.
      expect(elapsed, `${mode} answered after ${elapsed} ms`).toBeLessThan(15_000);
      proxy.restore();
      // nothing half-written: the other session does not exist
      const direct = new pg.Client({ connectionString: PG_ADMIN.replace(/\/postgres$/, `/${SCRATCH}`) });
      await direct.connect();
      const sess = await direct.query('SELECT count(*)::int AS c FROM sessions WHERE project_id = $1 AND id = $2', [
        projectId,
        other.sessionId,
      ]);
      await direct.end();
      expect(sess.rows[0].c).toBe(0);
    }

    // Recovery without a restart: the same requests now succeed (a pool client may need one retry).
    const retry = async (url: string, body: unknown) => {
      for (let i = 0; ; i++) {
        const r = await post(url, body);
        if (r.statusCode < 300 || i > 20) return r;
        await sleep(200);
      }
    };
    expect((await retry('/ingest/crash', crash)).statusCode).toBe(201);
    expect((await retry('/ingest/crash', crash)).statusCode).toBe(201);
    const groups = await crashGroups(s, projectId);
    expect(groups.map((g) => ({ occurrence_count: g.occurrence_count }))).toEqual([{ occurrence_count: 1 }]);
    expect((await retry('/ingest/events', { sessionId: sid, events: [P.navigate(sid, 0)] })).statusCode).toBe(201);
    expect(await countRows(s, 'events', projectId)).toBe(before.events + 1);
    expect((await s.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  }, 120_000);

  it('NUL and lone surrogates are stored as U+FFFD instead of failing the stores', async () => {
    const start = P.sessionStart({ userId: 'nul\u0000user' });
    (start.device as Record<string, unknown>).model = 'half\ud800pair';
    expect((await post('/ingest/session', start)).statusCode).toBe(201);
    const sid = start.sessionId;
    const ev = { ...P.customEvent(sid, 0), name: 'n\u0000', properties: { 'k\ud800': 'v\udc00', ok: '\ud83d\ude00' } };
    expect(
      (await post('/ingest/events', { sessionId: sid, events: [ev, { ...P.navigate(sid, 1), to: '\ud800' }] }))
        .statusCode,
    ).toBe(201);
    expect((await post('/ingest/crash', P.crash(sid, { message: 'boom\u0000' }))).statusCode).toBe(201);
    await s.settled(); // the spool's loads, then the direct reads
    const row = await s.svc.stores.pg.query<{ user_id: string; model: string }>(
      'SELECT user_id, model FROM sessions WHERE project_id = $1 AND id = $2',
      [projectId, sid],
    );
    expect(row.rows[0]).toEqual({ user_id: 'nul\ufffduser', model: 'half\ufffdpair' });
    const data = await s.svc.stores.ch.query<{ data: string }>(
      'SELECT data FROM events FINAL WHERE project_id = {p:String} AND session_id = {s:String} ORDER BY sequence_number',
      { p: projectId, s: sid },
    );
    expect(JSON.parse(data[0]!.data)).toEqual({
      name: 'n\ufffd',
      properties: { 'k\ufffd': 'v\ufffd', ok: '\ud83d\ude00' },
    });
  });
});
