import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { T0, crash, navigate, networkRequest, sessionStart } from '../helpers/payloads.ts';
import { sleep } from '../helpers/wait.ts';

// The safety lag of incremental reads, kept short here: a row is returned once its updatedAt
// is this old. Pulls below wait it out first (settle), as a nightly job's pull always has.
const LAG = 300;

let s: TestServer;
type Project = Awaited<ReturnType<TestServer['createProject']>>;
let A: Project;
let B: Project;
type Row = Record<string, unknown> & { id: string; updatedAt: string };

async function post(p: Project, url: string, payload: object) {
  const r = await s.app.inject({ method: 'POST', url, headers: p.auth, payload });
  if (r.statusCode >= 300) throw new Error(`${url}: ${r.statusCode} ${r.body}`);
}
const get = (p: Project, url: string) => s.app.inject({ method: 'GET', url, headers: p.auth });
/** The spools load what was sent; event batches stamp their session, crash occurrences their group, through coalesced writers; then the lag passes. */
const settle = async () => {
  await s.settled();
  await Promise.all([s.svc.touches.flush(), s.svc.crashTouches.flush()]);
  await sleep(LAG + 50);
};

/**
 * One pull of a nightly job: start at updatedSince (first run) or the saved cursor, walk with
 * the returned cursor until a page comes back empty; `between` runs after each page (rows
 * changing while the job pulls).
 */
async function pull(
  p: Project,
  resource: string,
  start: { updatedSince?: string; cursor?: string },
  limit = 2,
  between?: (page: number) => Promise<void>,
) {
  const rows: Row[] = [];
  let q = start.cursor
    ? `cursor=${encodeURIComponent(start.cursor)}`
    : `updatedSince=${encodeURIComponent(start.updatedSince ?? '')}`;
  let cursor = start.cursor ?? '';
  for (let page = 0; ; page++) {
    const r = await get(p, `/export/${resource}?${q}&limit=${limit}`);
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    expect(r.headers['x-next-cursor']).toBe(body.nextCursor);
    cursor = body.nextCursor;
    if (body.data.length === 0) return { rows, cursor };
    rows.push(...body.data);
    q = `cursor=${encodeURIComponent(cursor)}`;
    await between?.(page);
  }
}

/** The warehouse side: rows upserted by id, the later pull winning; a merged group's row deletes it. */
function upsert(table: Map<string, Row>, rows: Row[]) {
  for (const r of rows) {
    if (r.mergedInto) table.delete(r.id);
    else table.set(r.id, r);
  }
}

async function everything(p: Project, resource: string): Promise<Map<string, Row>> {
  const r = await get(p, `/export/${resource}?limit=1000`);
  return new Map((r.json().data as Row[]).map((x) => [x.id, x]));
}

beforeAll(async () => {
  s = await startTestServer({
    EXPORT_SYNC_LAG_MS: String(LAG),
    EXPORT_TOUCH_INTERVAL_MS: '50',
    RATE_LIMIT_EXPORT_PER_MIN: '100000',
    RATE_LIMIT_INGEST_PER_MIN: '100000',
  });
  A = await s.createProject('A');
  B = await s.createProject('B');
});

afterAll(async () => {
  await s?.close();
});

describe('incremental export: updatedSince and cursor', () => {
  it('the union of pulls, with rows changing before and during them, equals the final state', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const st = sessionStart({ startedAt: T0 + i * 1000 });
      ids.push(st.sessionId);
      await post(A, '/ingest/session', st);
    }
    await post(
      A,
      '/ingest/crash',
      crash(ids[0]!, { stackTrace: 'at a (a.js:1:1)', isFatal: false, timestamp: T0 + 10 }),
    );
    await post(
      A,
      '/ingest/crash',
      crash(ids[1]!, { stackTrace: 'at b (b.js:1:1)', isFatal: false, timestamp: T0 + 20 }),
    );
    await post(
      A,
      '/ingest/crash',
      crash(ids[1]!, { stackTrace: 'at c (c.js:1:1)', isFatal: false, timestamp: T0 + 25 }),
    );
    // Another project's changes never show.
    const other = sessionStart();
    await post(B, '/ingest/session', other);
    await settle();

    const sessions = new Map<string, Row>();
    const crashes = new Map<string, Row>();
    // Night 1. While it pulls, rows it already passed and rows still ahead of it change.
    const night1 = await pull(A, 'sessions', { updatedSince: '2020-01-01' }, 2, async (page) => {
      if (page === 0) {
        await post(A, '/ingest/session/end', { sessionId: ids[0]!, endedAt: T0 + 60_000 }); // already pulled
        await post(A, '/ingest/session/end', { sessionId: ids[5]!, endedAt: T0 + 65_000 }); // not yet pulled
      }
    });
    upsert(sessions, night1.rows);
    expect(night1.rows.map((r) => r.id)).not.toContain(other.sessionId);
    const crashNight1 = await pull(A, 'crashes', { updatedSince: '2020-01-01' });
    upsert(crashes, crashNight1.rows);
    expect(crashNight1.rows).toHaveLength(3);
    expect(crashNight1.rows.every((r) => r.mergedInto === null)).toBe(true);

    // During the day: every kind of change to an exported field.
    await post(
      A,
      '/ingest/crash',
      crash(ids[2]!, { stackTrace: 'at a (a.js:1:1)', isFatal: true, timestamp: T0 + 30 }),
    ); // status crashed; group a counters
    await post(A, '/ingest/network', { sessionId: ids[3]!, requests: [networkRequest({ statusCode: 502 })] }); // hasNetworkErrors
    await post(A, '/ingest/events', { sessionId: ids[4]!, events: [navigate(ids[4]!, 0), navigate(ids[4]!, 1)] }); // eventCount
    const late = sessionStart({ startedAt: T0 - 5000 }); // a new session, started "earlier"
    await post(A, '/ingest/session', late);
    const groupB = [...crashes.values()].find(
      (g) => g.message && g.occurrenceCount === 1 && g.lastSeenAt === new Date(T0 + 20).toISOString(),
    )!;
    const patch = await s.app.inject({
      method: 'PATCH',
      url: `/api/projects/${A.projectId}/crash-groups/${groupB.id}`,
      headers: s.admin,
      payload: { status: 'acknowledged' },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    // Group c is merged into group a: the warehouse holds c's row from night 1.
    const groupOf = (at: number) => [...crashes.values()].find((g) => g.lastSeenAt === new Date(at).toISOString())!;
    const [groupA, groupC] = [groupOf(T0 + 10), groupOf(T0 + 25)];
    const merge = await s.app.inject({
      method: 'POST',
      url: `/api/projects/${A.projectId}/crash-groups/${groupA.id}/merge`,
      headers: s.admin,
      payload: { groupIds: [groupC.id] },
    });
    expect(merge.statusCode, merge.body).toBe(200);
    // A late report of an old crash: lastSeenAt does not move, occurrenceCount does.
    await post(
      A,
      '/ingest/crash',
      crash(ids[3]!, { stackTrace: 'at b (b.js:1:1)', isFatal: false, timestamp: T0 + 1 }),
    );
    await settle();

    // Night 2 resumes from the cursors night 1 saved.
    upsert(sessions, (await pull(A, 'sessions', { cursor: night1.cursor })).rows);
    const crashNight2 = await pull(A, 'crashes', { cursor: crashNight1.cursor });
    upsert(crashes, crashNight2.rows);
    expect(crashNight2.rows.map((r) => r.id).sort()).toEqual([...crashes.keys(), groupC.id].sort());
    // the merged group's last row names the kept group; the warehouse dropped it
    expect(crashNight2.rows.find((r) => r.id === groupC.id)).toMatchObject({ mergedInto: groupA.id });
    expect(crashes.has(groupC.id)).toBe(false);
    expect(crashes.get(groupA.id)).toMatchObject({ occurrenceCount: 3, mergedInto: null });

    expect(sessions).toEqual(await everything(A, 'sessions'));
    expect(crashes).toEqual(await everything(A, 'crashes'));
    expect(sessions.get(ids[4]!)).toMatchObject({ eventCount: 2 });
    expect(sessions.get(ids[2]!)).toMatchObject({ status: 'crashed' });
    expect(sessions.get(ids[3]!)).toMatchObject({ hasNetworkErrors: true });
    expect(sessions.get(ids[5]!)).toMatchObject({ status: 'completed' });
    expect(crashes.get(groupB.id)).toMatchObject({
      status: 'acknowledged',
      occurrenceCount: 2,
      lastSeenAt: groupB.lastSeenAt,
    });

    // Night 3: nothing changed, nothing comes back, and the cursor stays where it was.
    const night3 = await pull(A, 'sessions', { cursor: night1.cursor });
    const again = await pull(A, 'sessions', { cursor: night3.cursor });
    expect(again).toEqual({ rows: [], cursor: night3.cursor });
  });

  it('rows that share an updatedAt are each returned once, in id order, across page boundaries', async () => {
    const C = await s.createProject('ties');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const st = sessionStart();
      ids.push(st.sessionId);
      await post(C, '/ingest/session', st);
    }
    // One instant for all of them (a batch of touches can stamp many rows in one millisecond).
    const t = Date.now() - 10_000;
    await (await s.stores()).pg.query('UPDATE sessions SET updated_at = $2 WHERE project_id = $1', [C.projectId, t]);
    const { rows } = await pull(C, 'sessions', { updatedSince: new Date(t).toISOString() }, 1);
    expect(rows.map((r) => r.id)).toEqual([...ids].sort());
    expect(new Set(rows.map((r) => r.updatedAt))).toEqual(new Set([new Date(t).toISOString()]));
    // updatedSince is inclusive: one millisecond later, none of them.
    expect((await pull(C, 'sessions', { updatedSince: new Date(t + 1).toISOString() })).rows).toEqual([]);
  });

  it('streams and file formats carry the cursor in X-Next-Cursor; updatedSince combines with from/to', async () => {
    const E = await s.createProject('stream');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const st = sessionStart({ startedAt: T0 + i * 86_400_000 });
      ids.push(st.sessionId);
      await post(E, '/ingest/session', st);
    }
    await settle();
    const r = await get(E, '/export/sessions?updatedSince=2020-01-01&stream=true');
    expect(r.statusCode).toBe(200);
    const lines = r.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
    expect(lines.map((x) => x.id).sort()).toEqual([...ids].sort());
    const cursor = r.headers['x-next-cursor'] as string;
    expect(cursor).toMatch(/^v1\./);
    expect((await get(E, `/export/sessions?cursor=${encodeURIComponent(cursor)}&stream=true`)).body).toBe('');
    for (const f of ['csv', 'parquet']) {
      const x = await get(E, `/export/sessions?updatedSince=2020-01-01&format=${f}&limit=2`);
      expect(x.statusCode).toBe(200);
      expect(x.headers['x-next-cursor']).toMatch(/^v1\./);
      expect(x.headers['x-total-count']).toBe('4');
    }
    // from/to still filter on startedAt: the changed sessions among those started in that range.
    const ranged = (await get(E, '/export/sessions?updatedSince=2020-01-01&from=2026-01-02&to=2026-01-03')).json();
    expect(ranged.data.map((x: Row) => x.id).sort()).toEqual([ids[1], ids[2]].sort());
    // Without updatedSince or cursor the envelope is the contract's, with no cursor.
    expect(Object.keys((await get(E, '/export/sessions')).json())).toEqual(['data', 'total', 'page', 'limit', 'pages']);
  });

  it('refuses page walks, both starts at once, and cursors or dates it cannot read (400)', async () => {
    const cursor = (await get(A, '/export/crashes?updatedSince=2020-01-01')).json().nextCursor;
    for (const q of [
      `cursor=${encodeURIComponent(cursor)}&page=2`,
      `updatedSince=2020-01-01&cursor=${encodeURIComponent(cursor)}`,
      'cursor=abc',
      `cursor=v1.${Buffer.from('12:not-a-uuid').toString('base64url')}`,
      'updatedSince=yesterday',
      'updatedSince=2026-02-30',
    ]) {
      const r = await get(A, `/export/crashes?${q}`);
      expect(r.statusCode, q).toBe(400);
      expect(typeof r.json().error).toBe('string');
    }
  });
});
