import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecords, type SpooledRecord } from '../../src/stores/spool/records.ts';
import { decodeCrashRecord, encodeCrashRecord } from '../../src/pipeline/crashPipeline.ts';
import { classify, DeferJobError, PermanentError, PermanentJobError } from '../../src/pipeline/errors.ts';
import { QueueFullError } from '../../src/domain/errors.ts';
import { RowsRefusedError, StoreDownError } from '../../src/stores/clickhouse/batcher.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { crashGroups, metricValue, outboxJobs, sessionRow } from '../helpers/inspect.ts';
import { waitFor } from '../helpers/wait.ts';
import * as P from '../helpers/payloads.ts';
import { release } from '../helpers/bundle.ts';
import { randomUUID } from 'node:crypto';
import { crashOccurrenceId } from '../../src/domain/crashGrouping.ts';

// Issues 31 item 1 and 34 item 2: /ingest/crash through the durable spool, recorded by the
// crash pipeline's loader in named steps under one error policy. Real stores, real HTTP stack.

/** A report whose stack's first line is its message: one group per message. */
const crashOf = (sessionId: string, message: string, o: Record<string, unknown> = {}) =>
  P.crash(sessionId, { message, stackTrace: `${message}\n${P.crash(sessionId).stackTrace}`, ...o });

const spooled = (projectId: string, crash: object): SpooledRecord => ({
  chunks: [encodeCrashRecord(projectId, crash as never)],
  rows: 1,
});

/** A step's histogram has counted at least one run with this outcome. */
const stepRan = (step: string, outcome: string) =>
  new RegExp(
    `^flightrec_pipeline_step_duration_seconds_count\\{pipeline="crash",step="${step.replace('.', '\\.')}",` +
      `outcome="${outcome}"\\} [1-9]`,
    'm',
  );
/** Exactly one record set aside at this step for this reason. */
const setAsideOnce = (step: string, reason: string) =>
  new RegExp(`^flightrec_pipeline_set_aside_total\\{pipeline="crash",step="${step}",reason="${reason}"\\} 1$`, 'm');

describe('the error policy', () => {
  it('maps every vocabulary onto retryable or permanent in one place', () => {
    const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });
    const is = (e: unknown, kind: string, reason?: string) =>
      expect(classify(e), String(e)).toMatchObject(reason ? { kind, reason } : { kind });
    is(new StoreDownError(new Error('down')), 'retryable', 'clickhouse-down');
    is(new QueueFullError(), 'retryable', 'queue-full');
    expect(classify(new DeferJobError(80))).toEqual({ kind: 'retryable', reason: 'deferred', delayMs: 80 });
    is(new RowsRefusedError(new Error('Cannot parse')), 'permanent', 'rows-refused');
    is(new PermanentJobError('gone'), 'permanent');
    expect(classify(new PermanentError('session-gone'))).toEqual({ kind: 'permanent', reason: 'session-gone' });
    // Postgres: the socket, pg's own timeouts, SQLSTATEs of a server that cannot serve now
    const storeTrouble = [
      coded('ECONNREFUSED'),
      coded('ECONNRESET'),
      coded('57P01'),
      coded('08006'),
      coded('53300'),
      coded('40001'),
      new Error('Query read timeout'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
    ];
    for (const e of storeTrouble) is(e, 'retryable');
    // …and SQLSTATEs that are about the data
    is(coded('22P02'), 'permanent', 'postgres-refused');
    is(coded('UND_ERR_SOCKET'), 'retryable', 'store-unreachable');
    is(new TypeError("Cannot read properties of undefined (reading 'split')"), 'permanent', 'program-error');
    is(new TypeError('fetch failed', { cause: coded('ECONNREFUSED') }), 'retryable');
    is(new Error('something no table names'), 'retryable', 'unclassified');
  });
});

describe('crash records', () => {
  it('carry the project and the parsed report whole, optional and unknown fields included', () => {
    const crash = {
      ...P.crash('0b9b3a52-7d0e-4d55-9a43-8e0d6c7b1a11'),
      environment: 'staging',
      tags: { plan: 'pro' },
      futureField: [1, { a: 'é\u2028' }],
    };
    const bytes = encodeCrashRecord('7f7e3c1e-1111-4222-8333-944455556666', crash);
    expect(bytes.at(-1)).toBe(0x0a);
    expect(decodeCrashRecord(bytes)).toEqual({ projectId: '7f7e3c1e-1111-4222-8333-944455556666', crash });
    expect(() => decodeCrashRecord(Buffer.from('{"v":2}\n'))).toThrow(PermanentError);
    expect(() => decodeCrashRecord(Buffer.from('not json'))).toThrow(PermanentError);
  });
});

describe('/ingest/crash with the spool (embedded stores)', () => {
  let s: TestServer;
  let auth: { authorization: string };
  let projectId: string;

  beforeAll(async () => {
    s = await startTestServer(
      {
        INGEST_SPOOL: 'true',
        SPOOL_LOAD_INTERVAL_MS: '100',
        RATE_LIMIT_INGEST_PER_MIN: '1000000',
        RATE_LIMIT_EXPORT_PER_MIN: '1000000',
      },
      undefined,
      undefined,
      // These tests read while reports are still spooled (a 201 is durable, not yet visible).
      { readAfterSettled: false },
    );
    ({ auth, projectId } = await s.createProject('crash spool'));
  });
  afterAll(() => s?.close());

  const post = (url: string, payload: object, headers: Record<string, string> = auth) =>
    s.app.inject({ method: 'POST', url, headers, payload });
  const startSession = async (overrides: Record<string, unknown> = {}) => {
    const start = P.sessionStart(overrides);
    expect((await post('/ingest/session', start)).statusCode).toBe(201);
    return start.sessionId;
  };
  const exportedGroups = async () => {
    const r = await s.app.inject({ method: 'GET', url: '/export/crashes?limit=1000', headers: auth });
    expect(r.statusCode).toBe(200);
    return r.json().data as { id: string; message: string; occurrenceCount: number }[];
  };
  const groupOf = async (message: string) => (await exportedGroups()).find((g) => g.message === message);

  it('answers 201 once spooled; the group, its count and the crashed session become visible', async () => {
    const sid = await startSession();
    const crash = crashOf(sid, 'Error: spooled once');
    const r = await post('/ingest/crash', crash);
    expect(r.statusCode).toBe(201);
    expect(r.json()).toEqual({ ok: true });
    const g = await waitFor('the group', async () => {
      const x = await groupOf('Error: spooled once');
      return x?.occurrenceCount === 1 ? x : undefined;
    });
    expect(g).toMatchObject({ occurrenceCount: 1 });
    const crashed = async () => (await sessionRow(s, projectId, sid))?.status === 'crashed';
    expect(await waitFor('the session flagged', crashed)).toBe(true);
    // the first occurrence's job, once
    const jobs = (await outboxJobs(s, projectId)).filter((j) => j.group_id === g.id && j.kind === 'new_crash_group');
    expect(jobs).toHaveLength(1);
    const metrics = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(stepRan('record', 'ok'));
    expect(metrics).toMatch(stepRan('decode', 'ok'));
    // the record step's own steps, each timed
    for (const step of ['record.read', 'record.group', 'record.store', 'record.decide'])
      expect(metrics).toMatch(stepRan(step, 'ok'));
    expect(metrics).toMatch(/^flightrec_crash_spool_loaded_reports [1-9]/m);
  });

  it('checks the key, the session and the body at the request, spooling nothing it refuses', async () => {
    const before = s.svc.crashPipeline!.spool.loadedRows + s.svc.crashPipeline!.spool.bytes;
    const unknown = await post('/ingest/crash', P.crash('9d2f3c4b-0000-4000-8000-000000000001'));
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'Session not found' });
    const sid = await startSession();
    const bad = await post('/ingest/crash', { ...P.crash(sid), isFatal: 'yes' });
    expect(bad.statusCode).toBe(422);
    const noKey = await s.app.inject({ method: 'POST', url: '/ingest/crash', payload: P.crash(sid) });
    expect(noKey.statusCode).toBe(401);
    expect(s.svc.crashPipeline!.spool.loadedRows + s.svc.crashPipeline!.spool.bytes).toBe(before);
  });

  it('a report sent again, and a segment replayed whole, count once and alert once', async () => {
    const sid = await startSession();
    const crash = { ...crashOf(sid, 'Error: replayed'), environment: 'staging' };
    for (let i = 0; i < 3; i++) expect((await post('/ingest/crash', crash)).statusCode).toBe(201);
    expect(await s.svc.crashPipeline!.settled()).toBe(true);
    // What a restart after kill -9 does: the same records through the loader again.
    const out = await s.svc.crashPipeline!.runBatch([spooled(projectId, crash), spooled(projectId, crash)]);
    expect(out.refused).toEqual([]);
    const g = await waitFor('the group', () => groupOf('Error: replayed'));
    expect(g.occurrenceCount).toBe(1);
    const rows = (await crashGroups(s, projectId)).filter((x) => x.message === 'Error: replayed');
    expect(rows.map((x) => x.occurrence_count)).toEqual([1]);
    expect((await outboxJobs(s, projectId)).filter((j) => j.group_id === g.id)).toHaveLength(1);
  });

  it('a batch of many reports over many groups counts each once and alerts once per new group, replayed or not', async () => {
    const a = await startSession();
    const b = await startSession();
    // letters, not digits or hex: the group key reads numbers and hex ids in a message as variable
    const word = (i: number) => 'ghijklmnopqrstuvwxyz'[i % 20]! + 'ghijklmnopqrstuvwxyz'[Math.floor(i / 20)]!;
    const messages = Array.from({ length: 40 }, (_, i) => `Error: batch group ${word(i)}`);
    // every group twice in the batch (two sessions: two occurrences), one report sent twice (one occurrence)
    const crashes = messages.flatMap((m, i) => [
      crashOf(a, m, { timestamp: P.T0 + i }),
      crashOf(b, m, { timestamp: P.T0 + 100 + i }),
    ]);
    const batch = [...crashes, crashes[0] as object].map((c) => spooled(projectId, c));
    expect((await s.svc.crashPipeline!.runBatch(batch)).refused).toEqual([]);
    // What a restart after kill -9 before the spool's ack does: the whole batch again.
    expect((await s.svc.crashPipeline!.runBatch(batch)).refused).toEqual([]);
    const mine = (await exportedGroups()).filter((g) => messages.includes(g.message));
    expect(mine).toHaveLength(40);
    expect(new Set(mine.map((g) => g.occurrenceCount))).toEqual(new Set([2]));
    // the counters the crash list orders by: each occurrence once, each user once
    const counters = await s.svc.stores.pg.query<{ n: number; fatal: number }>(
      `SELECT crash_occurrences::int AS n, fatal_occurrences::int AS fatal FROM crash_groups
       WHERE project_id = $1 AND message LIKE 'Error: batch group %'`,
      [projectId],
    );
    expect(counters.rows).toHaveLength(40);
    expect(new Set(counters.rows.map((r) => r.n))).toEqual(new Set([2]));
    const ids = new Set(mine.map((g) => g.id));
    const jobs = (await outboxJobs(s, projectId)).filter((j) => ids.has(j.group_id) && j.kind === 'new_crash_group');
    expect(jobs).toHaveLength(40);
    expect(new Set(jobs.map((j) => j.group_id)).size).toBe(40);
    for (const sid of [a, b]) expect((await sessionRow(s, projectId, sid))?.status).toBe('crashed');
  });

  it('keeps every field of the report in the spooled record', async () => {
    // Loads held: the record stays on disk, to be read back as the loader will read it.
    await s.svc.crashPipeline!.settled();
    const sid = await startSession();
    const crash = {
      ...crashOf(sid.toUpperCase(), 'Error: every field'),
      environment: 'staging',
      tags: { plan: 'pro' },
      somethingLater: { nested: [1, 2] },
    };
    const restore = holdLoads(s);
    try {
      expect((await post('/ingest/crash', crash)).statusCode).toBe(201);
      const dir = s.svc.crashPipeline!.spool.dir;
      expect(path.dirname(dir)).toBe(path.join(s.dataDir, 'spool', '.crashes'));
      const segs = fs.readdirSync(dir).filter((f) => f.endsWith('.seg'));
      expect(segs).toHaveLength(1);
      const { records } = readRecords(fs.readFileSync(path.join(dir, segs[0]!)));
      // the body as validated: the session id in one spelling, every other field as sent
      const decoded = records.map((r) => decodeCrashRecord(Buffer.concat(r.chunks)));
      expect(decoded).toEqual([{ projectId, crash: { ...crash, sessionId: sid } }]);
    } finally {
      restore();
    }
    expect(await s.svc.crashPipeline!.settled()).toBe(true);
    expect(await groupOf('Error: every field')).toMatchObject({ occurrenceCount: 1 });
  });

  it('sets a report that can never be recorded aside with its reason; the rest of its batch is recorded', async () => {
    const sid = await startSession();
    const good = (i: string) => spooled(projectId, crashOf(sid, `Error: batch mate ${i}`));
    const gone = spooled(projectId, crashOf('4c1d0b8e-5555-4666-8777-000000000000', 'Error: session gone'));
    // a report no code path expects (a number for a stack): a program error on that record alone
    const buggy = spooled(projectId, { ...crashOf(sid, 'Error: buggy'), stackTrace: 42 });
    const undecodable: SpooledRecord = { chunks: [Buffer.from('{"v":1,"projectId":\n')], rows: 1 };
    const batch = [good('one'), gone, good('two'), buggy, undecodable, good('three')];
    const out = await s.svc.crashPipeline!.runBatch(batch);
    expect(out.refused.map((r) => [r.error.step, r.error.verdict.reason]).sort()).toEqual([
      ['decode', 'undecodable'],
      ['record', 'program-error'],
      ['record', 'session-gone'],
    ]);
    for (const i of ['one', 'two', 'three']) {
      expect(await groupOf(`Error: batch mate ${i}`)).toMatchObject({ occurrenceCount: 1 });
    }
    const metrics = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(setAsideOnce('record', 'session-gone'));
    expect(metrics).toMatch(setAsideOnce('record', 'program-error'));
  });

  it('through the spool, a set-aside report lands in the refused file with its step and reason', async () => {
    // A session deleted between the request's check and the loader (retention, a removed project).
    const sid = await startSession();
    await s.svc.crashPipeline!.settled();
    const gone = s.svc.crashPipeline!.spool;
    const restore = holdLoads(s);
    try {
      expect((await post('/ingest/crash', crashOf(sid, 'Error: orphaned'))).statusCode).toBe(201);
      await s.svc.stores.pg.query('DELETE FROM sessions WHERE project_id = $1 AND id = $2', [projectId, sid]);
    } finally {
      restore();
    }
    expect(await gone.settled()).toBe(true);
    const file = path.join(path.dirname(gone.dir), `refused-${path.basename(gone.dir)}.ndjson`);
    const lines = fs
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const line = lines.find((l) => l.record?.crash?.message === 'Error: orphaned');
    expect(line).toMatchObject({
      step: 'record',
      reason: 'session-gone',
      record: { v: 1, projectId, crash: { sessionId: sid } },
    });
    expect(await groupOf('Error: orphaned')).toBeUndefined();
  });

  it('an error no rule names fails its batch a few times, then its record is set aside, the rest goes on', async () => {
    const poisoned = await startSession();
    const fine = await startSession();
    await s.svc.crashPipeline!.settled();
    const pg = s.svc.stores.pg;
    const realQuery = pg.query;
    const restore = holdLoads(s);
    try {
      for (const [sid, message] of [
        [poisoned, 'Error: poisoned'],
        [fine, 'Error: healthy neighbour'],
      ] as const) {
        expect((await post('/ingest/crash', crashOf(sid, message))).statusCode).toBe(201);
      }
      // the store fails this one session's reads in a way no rule knows
      (pg as { query: typeof pg.query }).query = ((sql: string, params?: readonly unknown[]) =>
        JSON.stringify(params ?? []).includes(poisoned)
          ? Promise.reject(new Error('a failure nobody has named'))
          : realQuery.call(pg, sql, params)) as typeof pg.query;
    } finally {
      restore();
    }
    try {
      expect(await s.svc.crashPipeline!.settled(60_000)).toBe(true);
    } finally {
      (pg as { query: typeof pg.query }).query = realQuery;
    }
    expect(await groupOf('Error: healthy neighbour')).toMatchObject({ occurrenceCount: 1 });
    expect(await groupOf('Error: poisoned')).toBeUndefined();
    const metrics = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    // set aside at the step that failed: the poisoned session's read
    expect(metrics).toMatch(setAsideOnce('record.read', 'unclassified-repeated'));
  }, 90_000);

  it('a ClickHouse outage fails the batch: the spool keeps it and records it once ClickHouse is back', async () => {
    const sid = await startSession();
    const ch = s.svc.stores.ch;
    const real = { insertBytes: ch.insertBytes, ping: ch.ping };
    const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' });
    const down = () => Promise.reject(refused());
    const retriesBefore = s.svc.crashPipeline!.batchRetries;
    Object.assign(ch, { insertBytes: down, ping: down });
    try {
      for (let i = 0; i < 5; i++) {
        const r = await post('/ingest/crash', crashOf(sid, 'Error: during outage', { timestamp: P.T0 + i }));
        expect(r.statusCode).toBe(201);
      }
      await waitFor('a failed batch', () => s.svc.crashPipeline!.batchRetries > retriesBefore);
      expect(s.svc.crashPipeline!.spool.bytes).toBeGreaterThan(0);
    } finally {
      Object.assign(ch, real);
    }
    expect(await s.svc.crashPipeline!.settled(30_000)).toBe(true);
    const g = await waitFor('the group', () => groupOf('Error: during outage'));
    expect(g.occurrenceCount).toBe(5);
    expect((await outboxJobs(s, projectId)).filter((j) => j.group_id === g.id)).toHaveLength(1);
    const metrics = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(stepRan('record', 'retryable'));
    expect(metrics).toMatch(stepRan('record.store', 'retryable'));
    expect(metrics).not.toMatch(/reason="clickhouse-down"/);
  });

  it('new groups are written with their counters; one whose occurrence the ledger already held is counted by the ledger', async () => {
    // A project of its own, so its counters are only these reports'.
    const own = await s.createProject('precounted groups');
    const sessionOf = async (userId: string) => {
      const st = P.sessionStart({ userId });
      const r = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: own.auth, payload: st });
      expect(r.statusCode).toBe(201);
      return st.sessionId;
    };
    const [ann, bob] = [await sessionOf('ann'), await sessionOf('bob')];
    const counters = async () =>
      (
        await s.svc.stores.pg.query<Record<string, unknown>>(
          `SELECT message, crash_occurrences, fatal_occurrences, crash_users, crash_last_seen_at,
             message_occurrences, message_users, message_last_seen_at
           FROM crash_groups WHERE project_id = $1 ORDER BY message`,
          [own.projectId],
        )
      ).rows;
    const run = async (crashes: object[]) =>
      expect((await s.svc.crashPipeline!.runBatch(crashes.map((c) => spooled(own.projectId, c)))).refused).toEqual([]);

    // Three new groups in one batch: one with two users and a report sent twice, one handled
    // (not fatal), one a message (its own class of counters).
    const a1 = crashOf(ann, 'Error: A', { timestamp: P.T0 + 1 });
    await run([
      a1,
      crashOf(bob, 'Error: A', { timestamp: P.T0 + 3 }),
      a1,
      crashOf(ann, 'Error: A', { timestamp: P.T0 + 2 }),
      crashOf(bob, 'Error: B', { isFatal: false, handled: true, timestamp: P.T0 + 5 }),
      crashOf(ann, 'Note: C', { level: 'info', isFatal: false, handled: true, timestamp: P.T0 + 7 }),
    ]);
    const none = { message_occurrences: 0, message_users: 0, message_last_seen_at: null };
    const after = [
      {
        message: 'Error: A',
        crash_occurrences: 3,
        fatal_occurrences: 3,
        crash_users: 2,
        crash_last_seen_at: P.T0 + 3,
        ...none,
      },
      {
        message: 'Error: B',
        crash_occurrences: 1,
        fatal_occurrences: 0,
        crash_users: 1,
        crash_last_seen_at: P.T0 + 5,
        ...none,
      },
      {
        message: 'Note: C',
        crash_occurrences: 0,
        fatal_occurrences: 0,
        crash_users: 0,
        crash_last_seen_at: null,
        message_occurrences: 1,
        message_users: 1,
        message_last_seen_at: P.T0 + 7,
      },
    ];
    expect(await counters()).toEqual(after);
    // The same batch again (a replay): the ledger counts nothing twice.
    await run([a1, crashOf(bob, 'Error: A', { timestamp: P.T0 + 3 })]);
    expect(await counters()).toEqual(after);

    // An occurrence the ledger holds already (counted under a key since changed: a new
    // fingerprint rule, a source map) whose key now opens a new group: the group is made, and
    // counts nothing, as the ledger says; the batch's other new group is counted.
    const d = crashOf(ann, 'Error: D', { timestamp: P.T0 + 9 });
    await s.svc.stores.pg.query('INSERT INTO crash_occurrence_ledger (project_id, id, group_id) VALUES ($1, $2, $3)', [
      own.projectId,
      crashOccurrenceId(d as never),
      randomUUID(),
    ]);
    const recounted = async () =>
      metricValue((await s.app.inject({ method: 'GET', url: '/metrics' })).body, 'flightrec_crash_batches_recounted');
    const before = await recounted();
    await run([d, crashOf(bob, 'Error: E', { timestamp: P.T0 + 11 })]);
    // the batch was decided twice, and says so
    expect(await recounted()).toBe(before + 1);
    const all = await counters();
    const [gd, ge] = ['Error: D', 'Error: E'].map((m) => all.find((g) => g.message === m));
    expect(gd).toMatchObject({ message: 'Error: D', crash_occurrences: 0, crash_users: 0, crash_last_seen_at: null });
    expect(ge).toMatchObject({
      message: 'Error: E',
      crash_occurrences: 1,
      crash_users: 1,
      crash_last_seen_at: P.T0 + 11,
    });
  });
});

describe('symbolication in the crash pipeline', () => {
  let s: TestServer;
  let auth: { authorization: string };
  let projectId: string;

  beforeAll(async () => {
    s = await startTestServer(
      { INGEST_SPOOL: 'true', SPOOL_LOAD_INTERVAL_MS: '100', RATE_LIMIT_EXPORT_PER_MIN: '1000000' },
      undefined,
      undefined,
      // One test holds a store back while a report waits in the spool, and reads meanwhile.
      { readAfterSettled: false },
    );
    ({ auth, projectId } = await s.createProject('symbolication'));
  });
  afterAll(() => s?.close());

  const post = (url: string, payload: object) => s.app.inject({ method: 'POST', url, headers: auth, payload });
  const uploadMap = async (rel: string, name: string, body: string) => {
    const r = await s.app.inject({
      method: 'POST',
      url: `/api/projects/${projectId}/releases/${rel}/artifacts?name=${encodeURIComponent(name)}`,
      headers: { ...s.admin, 'content-type': 'application/octet-stream' },
      payload: body,
    });
    expect(r.statusCode).toBe(201);
  };
  const crashIn = async (appVersion: string, stackTrace: string) => {
    const st = P.sessionStart();
    st.device = { ...st.device, appVersion, appBuildNumber: '1', platform: 'linux' };
    expect((await post('/ingest/session', st)).statusCode).toBe(201);
    const message = 'Error: Order 1042 not found';
    const crash = { sessionId: st.sessionId, message, stackTrace, isFatal: true, handled: false, timestamp: P.T0 };
    const r = await post('/ingest/crash', crash);
    expect(r.statusCode).toBe(201);
  };
  const groupsOf = async (appVersion: string) =>
    (await crashGroups(s, projectId)).filter((g) => g.app_version === appVersion) as {
      id: string;
      stack_head: string;
    }[];

  it('artifacts unreadable because a store fails are a retry of the batch, never a group on a raw stack', async () => {
    const a = release('https://shop.example.com/assets/index-5ca1ab.js', '5ca1ab');
    await uploadMap('6.0.0', '~/assets/index-5ca1ab.js.map', a.map);
    const pg = s.svc.stores.pg;
    const realQuery = pg.query;
    const retries = s.svc.crashPipeline!.batchRetries;
    (pg as { query: typeof pg.query }).query = ((sql: string, params?: readonly unknown[]) =>
      sql.includes('FROM release_artifacts')
        ? Promise.reject(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))
        : realQuery.call(pg, sql, params)) as typeof pg.query;
    try {
      await crashIn('6.0.0', a.stack);
      await waitFor('a retried batch', () => s.svc.crashPipeline!.batchRetries > retries);
      // Read directly: the report is still spooled, so the settling helpers would wait for it.
      const groups = await pg.query('SELECT id FROM crash_groups WHERE project_id = $1', [projectId]);
      expect(groups.rows).toEqual([]);
    } finally {
      (pg as { query: typeof pg.query }).query = realQuery;
    }
    expect(await s.svc.crashPipeline!.settled()).toBe(true);
    const g = await groupsOf('6.0.0');
    expect(g).toHaveLength(1);
    expect(g[0]!.stack_head).toContain('at findOrder (src/orders.ts:6:');
  });

  it('one batch reads a stack once per release: copies share it, another release without the map keeps it raw', async () => {
    // A project of its own: the other tests' groups of this bundle would take these reports in.
    const own = await s.createProject('one reading per stack');
    const a = release('https://shop.example.com/assets/index-0ce0a1.js', '0ce0a1');
    const up = await s.app.inject({
      method: 'POST',
      url: `/api/projects/${own.projectId}/releases/6.2.0/artifacts?name=${encodeURIComponent('~/assets/index-0ce0a1.js.map')}`,
      headers: { ...s.admin, 'content-type': 'application/octet-stream' },
      payload: a.map,
    });
    expect(up.statusCode).toBe(201);
    const sessionIn = async (appVersion: string) => {
      const st = P.sessionStart();
      st.device = { ...st.device, appVersion, appBuildNumber: '1', platform: 'linux' };
      const r = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: own.auth, payload: st });
      expect(r.statusCode).toBe(201);
      return st.sessionId;
    };
    const mapped = await sessionIn('6.2.0');
    const unmapped = await sessionIn('6.2.1');
    const crash = (sessionId: string, timestamp: number) => ({
      sessionId,
      message: 'Error: Order 1042 not found',
      stackTrace: a.stack,
      isFatal: true,
      handled: false,
      timestamp,
    });
    // the same stack four times in one batch: three copies in the release with the map, one without
    const batch = [
      crash(mapped, P.T0 + 1),
      crash(unmapped, P.T0 + 2),
      crash(mapped, P.T0 + 3),
      crash(mapped, P.T0 + 4),
    ];
    expect((await s.svc.crashPipeline!.runBatch(batch.map((c) => spooled(own.projectId, c)))).refused).toEqual([]);
    const rows = (await crashGroups(s, own.projectId)) as {
      app_version: string;
      stack_head: string;
      occurrence_count: number;
    }[];
    expect(rows).toHaveLength(2);
    const withMap = rows.find((g) => g.app_version === '6.2.0');
    expect(withMap?.stack_head).toContain('at findOrder (src/orders.ts:6:');
    expect(withMap?.occurrence_count).toBe(3);
    const raw = rows.find((g) => g.app_version === '6.2.1');
    expect(raw?.stack_head).toContain('index-0ce0a1.js');
    expect(raw?.occurrence_count).toBe(1);
  });

  it('a bad artifact leaves the stack raw, and the crash page says which', async () => {
    const a = release('https://shop.example.com/assets/index-bad0a1.js', 'bad0a1');
    await uploadMap('6.1.0', '~/assets/index-bad0a1.js.map', a.map);
    // stored before uploads were checked, or damaged since: no longer a source map
    await s.svc.stores.pg.query(
      "UPDATE release_artifacts SET content = $2 WHERE project_id = $1 AND release = '6.1.0'",
      [projectId, zlib.gzipSync('{"version":3,"mappings":')],
    );
    await crashIn('6.1.0', a.stack);
    expect(await s.svc.crashPipeline!.settled()).toBe(true);
    const g = await groupsOf('6.1.0');
    expect(g).toHaveLength(1);
    expect(g[0]!.stack_head).toContain('index-bad0a1.js');
    const page = await s.svc.dashboard.crashGroup(projectId, g[0]!.id);
    expect(page?.latest).toMatchObject({
      symbolicatedStack: null,
      unreadableArtifacts: ['~/assets/index-bad0a1.js.map'],
    });
  });
});

/** Holds the crash spool's loads (its Postgres reads wait) until the returned function is called. */
function holdLoads(s: TestServer): () => void {
  const p = s.svc.crashPipeline!;
  const run = p.runBatch.bind(p);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  p.runBatch = async (records) => {
    await gate;
    return run(records);
  };
  return () => {
    release();
    p.runBatch = run;
  };
}
