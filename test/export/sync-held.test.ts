import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { sessionStart } from '../helpers/payloads.ts';
import { sleep } from '../helpers/wait.ts';

// Finding 6 of the third probe: an incremental pull passed over a transaction that stayed open
// longer than EXPORT_SYNC_LAG_MS: its rows carry the time they were written, the cursor moved
// past that time while they were invisible, and the next pull started after them. The window now
// ends before the oldest open writing transaction began. Holding a transaction open beside the
// server needs a second connection: a Postgres server (DATABASE_URL). PGlite has one connection,
// owned by the server, so no transaction can be open beside it there and the test is skipped.
const LAG = 300;
const url = process.env.DATABASE_URL;

describe.skipIf(!url)('a transaction held open past the lag is not passed over (DATABASE_URL)', () => {
  let s: TestServer;
  let slow: pg.Client;
  beforeAll(async () => {
    s = await startTestServer({ EXPORT_SYNC_LAG_MS: String(LAG), RATE_LIMIT_EXPORT_PER_MIN: '100000' });
    slow = new pg.Client({ connectionString: url });
    await slow.connect();
  });
  afterAll(async () => {
    await slow?.end().catch(() => {});
    await s?.close();
  });

  it('rows written by a slow transaction reach the next pull after it commits', async () => {
    const p = await s.createProject('held');
    const post = (payload: object) =>
      s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload });
    const pull = async (cursor: string) => {
      const r = await s.app.inject({
        method: 'GET',
        url: `/export/sessions?cursor=${encodeURIComponent(cursor)}&limit=1000`,
        headers: p.auth,
      });
      expect(r.statusCode, r.body).toBe(200);
      return r.json() as { data: { id: string }[]; nextCursor: string };
    };
    const first = sessionStart();
    expect((await post(first)).statusCode).toBe(201);
    await sleep(LAG + 50);
    const start = await s.app.inject({
      method: 'GET',
      url: `/export/sessions?updatedSince=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}&limit=1000`,
      headers: p.auth,
    });
    expect(start.json().data.map((x: { id: string }) => x.id)).toEqual([first.sessionId]);
    let cursor = start.json().nextCursor as string;

    // The slow writer: stamps `first` (a change the warehouse must see) and stays open.
    await slow.query('BEGIN');
    await slow.query(
      "UPDATE sessions SET user_id = 'changed-by-slow-writer', updated_at = floor(extract(epoch from clock_timestamp()) * 1000)::bigint WHERE project_id = $1 AND id = $2",
      [p.projectId, first.sessionId],
    );
    // Meanwhile other writes commit, stamped later, and the lag passes several times over.
    const later = sessionStart();
    expect((await post(later)).statusCode).toBe(201);
    await sleep(LAG * 4);
    const during = await pull(cursor);
    // The later session is not returned yet either: the window ends before the open transaction began.
    expect(during.data).toEqual([]);
    cursor = during.nextCursor;

    await slow.query('COMMIT');
    await sleep(LAG + 50);
    const after = await pull(cursor);
    const ids = after.data.map((x) => x.id).sort();
    expect(ids).toEqual([first.sessionId, later.sessionId].sort());
    expect(after.data.find((x) => x.id === first.sessionId)).toMatchObject({ userId: 'changed-by-slow-writer' });
  });
});
