import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { crashGroups } from '../helpers/inspect.ts';
import * as P from '../helpers/payloads.ts';
import { failInserts, refusingRowsWith } from '../helpers/insertFaults.ts';

// ClickHouse refusing inserts on the synchronous ingest path (INGEST_SPOOL=false): the requests
// whose rows failed answer a retryable 5xx and nothing they carried is stored; the others are
// unaffected. On the default path the spool acknowledges and its loader retries or sets rows
// aside (test/ingest/spool.test.ts); chDB binds one server per process, so this mode has its file.
let s: TestServer;
let auth: { authorization: string };
let projectId: string;

beforeAll(async () => {
  s = await startTestServer({ INGEST_SPOOL: 'false', RATE_LIMIT_INGEST_PER_MIN: '1000000' });
  ({ auth, projectId } = await s.createProject('insert faults'));
});
afterAll(async () => {
  await s?.close();
});

const post = (url: string, payload: unknown) =>
  s.app.inject({ method: 'POST', url, headers: auth, payload: payload as object });

async function newSession() {
  const body = P.sessionStart();
  const r = await post('/ingest/session', body);
  expect(r.statusCode).toBe(201);
  return body.sessionId;
}

const retryable = (code: number) => code === 500 || code === 503;
const retryBody = (status: number) => ({
  error: expect.any(String),
  code: status === 500 ? 'internal_error' : 'queue_full',
});

describe('ClickHouse refuses inserts, without the spool', () => {
  it('ClickHouse inserts fail: those requests get 5xx, the others are unaffected, nothing acknowledged is missing', async () => {
    const sid = await newSession();
    let failing = true;
    const restore = failInserts(s.svc.stores.ch, (table) =>
      failing ? new Error(`injected fault: insert into ${table} failed`) : null,
    );
    try {
      const batches = Array.from({ length: 6 }, (_, b) => [P.navigate(sid, b * 2), P.customEvent(sid, b * 2 + 1)]);
      const started = P.sessionStart();
      const [evs, net, start, crash] = await Promise.all([
        Promise.all(batches.map((events) => post('/ingest/events', { sessionId: sid, events }))),
        post('/ingest/network', { sessionId: sid, requests: [P.networkRequest()] }),
        post('/ingest/session', started),
        post('/ingest/crash', P.crash(sid, { stackTrace: 'at ch (fault.js:1:1)' })),
      ]);
      // A crash occurrence is a ClickHouse row too, and so is a session start's release-health
      // fact (clickhouse/007_release_health.sql): their requests fail (retryable) with the others.
      for (const r of [...evs, net, crash, start]) {
        expect(retryable(r.statusCode), r.body).toBe(true);
        expect(r.json()).toEqual(retryBody(r.statusCode));
      }
      const nl = await s.svc.stores.ch.query<{ c: number }>(
        'SELECT count() AS c FROM network_logs FINAL WHERE project_id = {p:String} AND session_id = {s:String}',
        { p: projectId, s: sid },
      );
      expect(Number(nl[0]!.c)).toBe(0);
      const stored = await s.svc.stores.ch.query<{ c: number }>(
        'SELECT count() AS c FROM events FINAL WHERE project_id = {p:String} AND session_id = {s:String}',
        { p: projectId, s: sid },
      );
      expect(Number(stored[0]!.c)).toBe(0);

      failing = false;
      const again = await Promise.all(batches.map((events) => post('/ingest/events', { sessionId: sid, events })));
      expect(again.map((r) => r.statusCode)).toEqual(batches.map(() => 201));
      const after = await s.svc.stores.ch.query<{ c: number }>(
        'SELECT count() AS c FROM events FINAL WHERE project_id = {p:String} AND session_id = {s:String}',
        { p: projectId, s: sid },
      );
      expect(Number(after[0]!.c)).toBe(12);
      // the start's retry finds its Postgres row and writes its fact from it, once
      expect((await post('/ingest/session', started)).statusCode).toBe(201);
      const facts = await s.svc.stores.ch.query<{ c: number }>(
        'SELECT count() AS c FROM session_facts FINAL WHERE project_id = {p:String} AND session_id = {s:String}',
        { p: projectId, s: started.sessionId },
      );
      expect(Number(facts[0]!.c)).toBe(1);
      // the crash's retry is stored once and makes its group
      expect((await post('/ingest/crash', P.crash(sid, { stackTrace: 'at ch (fault.js:1:1)' }))).statusCode).toBe(201);
      expect(
        (await crashGroups(s, projectId))
          .filter((g) => g.stack_head === 'at ch (fault.js:1:1)')
          .map((g) => g.occurrence_count),
      ).toEqual([1]);
    } finally {
      restore();
    }
  });

  it("one request's rows failing to insert does not fail the requests that shared its group-commit batch", async () => {
    const sid = await newSession();
    // A row ClickHouse would refuse, recognised by its route: every insert containing it fails.
    const restore = failInserts(s.svc.stores.ch, refusingRowsWith('/poison'));
    try {
      const good = Array.from({ length: 20 }, (_, b) => [P.navigate(sid, 100 + b)]);
      const answers = await Promise.all([
        ...good.slice(0, 10).map((events) => post('/ingest/events', { sessionId: sid, events })),
        post('/ingest/events', { sessionId: sid, events: [P.navigate(sid, 999, '/poison')] }),
        ...good.slice(10).map((events) => post('/ingest/events', { sessionId: sid, events })),
      ]);
      const poisoned = answers.splice(10, 1)[0]!;
      expect(poisoned.statusCode).toBe(500);
      expect(poisoned.json()).toEqual(retryBody(500));
      expect(answers.map((r) => r.statusCode)).toEqual(good.map(() => 201));
      const rows = await s.svc.stores.ch.query<{ seq: number }>(
        'SELECT sequence_number AS seq FROM events FINAL WHERE project_id = {p:String} AND session_id = {s:String} ORDER BY seq',
        { p: projectId, s: sid },
      );
      expect(rows.map((r) => Number(r.seq))).toEqual(good.map((_, b) => 100 + b));
    } finally {
      restore();
    }
  });
});
