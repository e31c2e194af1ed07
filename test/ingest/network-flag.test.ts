import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flaggedSessionOf, ingestLine } from '../../src/repos/ingestLines.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import * as P from '../helpers/payloads.ts';
import { clickHouseAway } from '../helpers/insertFaults.ts';
import { waitFor } from '../helpers/wait.ts';

// A session's network-error flag through the ingest spool: the line that first shows an error
// carries it, and the spool's loader sets it once the line is stored. No events request waits on
// Postgres for it; the flag shows with the events that raised it.

describe('the flag a spooled line carries', () => {
  const project = randomUUID();
  const session = randomUUID();
  const body = Buffer.from(JSON.stringify({ sessionId: session, events: [] }));

  it('is read back from the line alone', () => {
    expect(flaggedSessionOf(ingestLine(project, body, session))).toEqual({ projectId: project, sessionId: session });
    expect(flaggedSessionOf(ingestLine(project, body))).toBeUndefined();
    // as the schema lets an id through: upper case too
    const upper = session.toUpperCase();
    expect(flaggedSessionOf(ingestLine(project, body, upper))?.sessionId).toBe(upper);
  });

  it('is never read from the body: a body that names the key itself carries no flag', () => {
    const forged = Buffer.from(`{"network_errors":"${session}","sessionId":"${session}","events":[]}`);
    expect(flaggedSessionOf(ingestLine(project, forged))).toBeUndefined();
    expect(flaggedSessionOf(Buffer.from(`{"project_id":"${project}","network_errors":"not-a-uuid"}`))).toBeUndefined();
  });
});

let s: TestServer;
beforeAll(async () => {
  // Reads here must not wait for the spool: it cannot load while the store is away.
  s = await startTestServer({}, undefined, undefined, { readAfterSettled: false });
});
afterAll(async () => {
  await s?.app.close();
});

/** The flag as Postgres holds it, read directly: the spool is not waited for. */
async function flagOf(projectId: string, sessionId: string) {
  const r = await s.svc.stores.pg.query<{ has_network_errors: boolean }>(
    'SELECT has_network_errors FROM sessions WHERE project_id = $1 AND id = $2',
    [projectId, sessionId],
  );
  return r.rows[0]?.has_network_errors;
}

/** A project of its own with one session started. */
async function projectWithSession(name: string) {
  const { projectId, auth } = await s.createProject(name);
  const start = P.sessionStart();
  const r = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: start });
  expect(r.statusCode).toBe(201);
  return { projectId, auth, sid: start.sessionId };
}

describe('the network-error flag through the spool', () => {
  it('a request is answered while ClickHouse is away; the flag is set once its line is stored', async () => {
    const { projectId, auth, sid } = await projectWithSession('flag while away');
    const away = clickHouseAway(s.svc.stores.ch, ['ingest']);
    try {
      const r = await s.app.inject({
        method: 'POST',
        url: '/ingest/network',
        headers: auth,
        payload: { sessionId: sid, requests: [P.networkRequest({ statusCode: 503 })] },
      });
      expect(r.statusCode, r.body).toBe(201);
      await waitFor('a load of the line tried', () => away.tried() > 0);
      // the request did not set it, and the loader sets it only with the line stored
      expect(await flagOf(projectId, sid)).toBe(false);
    } finally {
      away.restore();
    }
    expect(await s.svc.spool?.settled(60_000)).toBe(true);
    expect(await flagOf(projectId, sid)).toBe(true);
    const sessions = await s.app.inject({ method: 'GET', url: '/export/sessions?limit=100', headers: auth });
    expect(sessions.json().data).toEqual([expect.objectContaining({ id: sid, hasNetworkErrors: true })]);
  }, 120_000);

  it('flags Postgres does not take wait in the spool while the rows are stored; set once it takes them', async () => {
    const { projectId, auth, sid } = await projectWithSession('flag write fails');
    const pg = s.svc.stores.pg;
    const query = pg.query;
    let down = true;
    let refused = 0;
    let flagWrites = 0;
    (pg as { query: typeof pg.query }).query = (async (sql: string, params?: unknown[]) => {
      if (sql.includes('has_network_errors = true')) {
        flagWrites++;
        if (down) {
          refused++;
          throw Object.assign(new Error('terminating connection (injected)'), { code: '57P01' });
        }
      }
      return query.call(pg, sql, params);
    }) as typeof pg.query;
    const seqs = async () =>
      (await s.app.inject({ method: 'GET', url: `/export/events?sessionId=${sid}&limit=100`, headers: auth }))
        .json()
        .data.map((e: { sequenceNumber: number }) => e.sequenceNumber);
    try {
      const pad = 'p'.repeat(20_000);
      const events = [
        { ...P.customEvent(sid, 0), properties: { pad } },
        P.networkEvent(sid, 1, 500),
        P.networkEvent(sid, 2, 200),
      ];
      const r = await s.app.inject({
        method: 'POST',
        url: '/ingest/events',
        headers: auth,
        payload: { sessionId: sid, events },
      });
      expect(r.statusCode, r.body).toBe(201);
      // the rows reach ClickHouse while the flag waits: refused, and tried again by later loads
      await waitFor('the flag refused twice', () => refused >= 2);
      await waitFor('the events stored', async () => (await seqs()).length === 3);
      expect(await seqs()).toEqual([0, 1, 2]);
      expect(await flagOf(projectId, sid)).toBe(false);
      // the body's segment is loaded and gone; the spool holds the flag alone, a line of its own
      const held = s.svc.spool?.bytes ?? 0;
      expect(held).toBeGreaterThan(0);
      expect(held).toBeLessThan(1000);
      // and its loads, which write no rows, leave the engine alone
      const ch = s.svc.stores.ch;
      const insertBytes = ch.insertBytes;
      let inserts = 0;
      (ch as { insertBytes: typeof ch.insertBytes }).insertBytes = (...a) => {
        inserts++;
        return insertBytes.apply(ch, a);
      };
      try {
        const before = refused;
        await waitFor('the flag refused twice more', () => refused >= before + 2);
      } finally {
        (ch as { insertBytes: typeof ch.insertBytes }).insertBytes = insertBytes;
      }
      expect(inserts).toBe(0);
      down = false;
      expect(await s.svc.spool?.settled(60_000)).toBe(true);
      expect(await flagOf(projectId, sid)).toBe(true);
      const writes = flagWrites;
      // a later error of the same session carries no flag again (this process knows it is set)
      const again = await s.app.inject({
        method: 'POST',
        url: '/ingest/network',
        headers: auth,
        payload: { sessionId: sid, requests: [P.networkRequest({ statusCode: 502 })] },
      });
      expect(again.statusCode).toBe(201);
      expect(await s.svc.spool?.settled(60_000)).toBe(true);
      expect(flagWrites).toBe(writes);
    } finally {
      (pg as { query: typeof pg.query }).query = query;
    }
    // the flag-only lines wrote no rows
    expect(await seqs()).toEqual([0, 1, 2]);
    const net = await s.app.inject({ method: 'GET', url: `/export/network?sessionId=${sid}&limit=100`, headers: auth });
    expect(net.json().total).toBe(3); // two mirrored network events and the request
  }, 120_000);
});
