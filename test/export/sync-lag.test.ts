import { afterAll, beforeAll, expect, it } from 'vitest';
import { PG_NOW_MS } from '../../src/repos/exportCore/postgres.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { sessionStart } from '../helpers/payloads.ts';

// The safety lag of incremental reads, at a minute, with rows stamped in the database directly:
// what a pull sees depends on the stamps, not on how fast the machine goes from a post to the
// pull (test/export/sync.test.ts keeps a short lag and waits it out instead).
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ EXPORT_SYNC_LAG_MS: '60000' });
});
afterAll(() => s?.close());

it('a row changed within the lag waits for the next pull, and the cursor does not pass it', async () => {
  const D = await s.createProject('lag');
  const send = (st: object) => s.app.inject({ method: 'POST', url: '/ingest/session', headers: D.auth, payload: st });
  const read = async (cursor?: string) => {
    const q = cursor ? `cursor=${encodeURIComponent(cursor)}` : 'updatedSince=2020-01-01';
    const r = await s.app.inject({ method: 'GET', url: `/export/sessions?${q}&limit=10`, headers: D.auth });
    expect(r.statusCode, r.body).toBe(200);
    return { ids: (r.json().data as { id: string }[]).map((x) => x.id), cursor: r.json().nextCursor as string };
  };
  const pg = (await s.stores()).pg;
  const stamp = (id: string, t: string) =>
    pg.query(`UPDATE sessions SET updated_at = ${t} WHERE project_id = $1 AND id = $2`, [D.projectId, id]);
  const a = sessionStart();
  expect((await send(a)).statusCode).toBe(201);
  await stamp(a.sessionId, `${PG_NOW_MS} - 120000`);
  const first = await read();
  expect(first.ids).toEqual([a.sessionId]);
  // b changes now: within the lag, so the pull leaves it, and its cursor stays where it was.
  const b = sessionStart();
  expect((await send(b)).statusCode).toBe(201);
  expect(await read(first.cursor)).toEqual({ ids: [], cursor: first.cursor });
  // Once its change is older than the lag, the next pull from the same cursor returns it.
  await stamp(b.sessionId, `${PG_NOW_MS} - 61000`);
  expect((await read(first.cursor)).ids).toEqual([b.sessionId]);
});
