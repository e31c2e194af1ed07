import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { dashboardProject, signup, type Account } from '../helpers/accounts.ts';
import { crash, sessionStart } from '../helpers/payloads.ts';
import { waitFor } from '../helpers/wait.ts';

// The Releases page's exact counts of quiet days (clickhouse/014_release_day_counts.sql): a day
// over and untouched for RELEASE_DAY_QUIET_MS is counted once and read from its kept counts; a
// late start or crash fact for it is on the page at once, and the day is counted again.

const QUIET_MS = 400;
const DAY = 86_400_000;
let s: TestServer;
let owner: Account;
let project: { projectId: string; auth: { authorization: string } };
const old = Date.now() - 5 * DAY;
const oldDay = new Date(old).toISOString().slice(0, 10);
const today = new Date().toISOString().slice(0, 10);

async function session(startedAt: number, appVersion: string, fatal = false) {
  const start = sessionStart({ startedAt, device: { ...sessionStart().device, appVersion, platform: 'ios' } });
  const r = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: project.auth, payload: start });
  expect(r.statusCode, r.body).toBe(201);
  if (fatal) {
    const c = crash(start.sessionId, { isFatal: true, handled: false, timestamp: startedAt + 1000 });
    const rc = await s.app.inject({ method: 'POST', url: '/ingest/crash', headers: project.auth, payload: c });
    expect(rc.statusCode, rc.body).toBe(201);
  }
}

const page = async () => {
  const r = await s.app.inject({
    method: 'GET',
    url: `/api/dashboard/projects/${project.projectId}/releases?from=${oldDay}&to=${today}`,
    headers: owner.headers,
  });
  expect(r.statusCode, r.body).toBe(200);
  const body = r.json() as { data: { appVersion: string; sessions: number; crashedSessions: number }[] };
  return Object.fromEntries(body.data.map((v) => [v.appVersion, [v.sessions, v.crashedSessions]]));
};

/** The days the store holds counts for, and when each was last counted. */
async function counted(): Promise<Map<string, number>> {
  const ch = (await s.stores()).ch;
  const rows = await ch.query<{ d: string; t: number }>(
    'SELECT toString(day) AS d, max(counted_at) AS t FROM release_day_counted WHERE project_id = {p:String} GROUP BY day',
    { p: project.projectId },
  );
  return new Map(rows.map((r) => [r.d, Number(r.t)]));
}

beforeAll(async () => {
  s = await startTestServer({ RELEASE_DAY_QUIET_MS: String(QUIET_MS) });
  owner = await signup(s);
  project = await dashboardProject(s, owner);
  await session(old, '1.0');
  await session(old + 1000, '1.0');
  await session(old + 2000, '2.0', true);
  await session(Date.now() - 60_000, '2.0');
});
afterAll(async () => {
  await s?.close();
});

describe('the Releases page over quiet days', () => {
  it('counts a quiet day once, then reads its kept counts; today is always counted from rows', async () => {
    // each read counts the days from rows until one finds the old day quiet and keeps it
    await waitFor(
      'the old day kept',
      async () => {
        expect(await page()).toEqual({ '1.0': [2, 0], '2.0': [2, 1] });
        return (await counted()).has(oldDay);
      },
      30_000,
    );
    expect(await page()).toEqual({ '1.0': [2, 0], '2.0': [2, 1] });
    const marks = await counted();
    expect(marks.has(oldDay)).toBe(true);
    expect(marks.has(today)).toBe(false);
    // the days between, over and without sessions, are kept as such
    expect(marks.size).toBe(5);
    // A session row the kept counts do not hold (written to the table directly, so no fact
    // touched its day) stays off the page: the old day is read from its counts, not its rows.
    const ch = (await s.stores()).ch;
    await ch.insert('release_sessions', [
      {
        project_id: project.projectId,
        day: oldDay,
        app_version: '1.0',
        platform: 'ios',
        session_id: '00000000-0000-4000-8000-000000000001',
        crashed: 0,
      },
    ]);
    expect(await page()).toEqual({ '1.0': [2, 0], '2.0': [2, 1] });
  });

  it('shows a late fact for a kept day at once, and counts the day again once it is quiet', async () => {
    const before = (await counted()).get(oldDay)!;
    // a late session of the old day that crashed: its facts touch the day
    await session(old + 3000, '1.0', true);
    await waitFor('the late facts loaded', async () => (await page())['1.0']?.[1] === 1, 10_000);
    // read from rows: the directly written row of the test before is counted now too
    await waitFor(
      'the old day counted again',
      async () => {
        expect(await page()).toEqual({ '1.0': [4, 1], '2.0': [2, 1] });
        return (await counted()).get(oldDay)! > before;
      },
      30_000,
    );
    expect(await page()).toEqual({ '1.0': [4, 1], '2.0': [2, 1] });
  });

  it('answers when keeping a day fails, and keeps it at the next read', async () => {
    const ch = (await s.stores()).ch;
    // a day kept before as one without sessions gets its first session
    const day = new Date(old + DAY).toISOString().slice(0, 10);
    const before = (await counted()).get(day)!;
    expect(before).toBeGreaterThan(0);
    await session(old + DAY, '2.0');
    const insert = ch.insert;
    let refused = 0;
    (ch as { insert: typeof ch.insert }).insert = async (table, rows) => {
      if (table === 'release_day_counts') {
        refused++;
        throw new Error('connect ECONNREFUSED (injected)');
      }
      return insert.call(ch, table, rows);
    };
    try {
      // reads answer while the day goes quiet, and once it has, with its keep refused
      await waitFor(
        'a keep refused',
        async () => {
          expect(await page()).toEqual({ '1.0': [4, 1], '2.0': [3, 1] });
          return refused > 0;
        },
        30_000,
      );
      expect((await counted()).get(day)).toBe(before);
    } finally {
      (ch as { insert: typeof ch.insert }).insert = insert;
    }
    expect(await page()).toEqual({ '1.0': [4, 1], '2.0': [3, 1] });
    expect((await counted()).get(day)).toBeGreaterThan(before);
    expect(await page()).toEqual({ '1.0': [4, 1], '2.0': [3, 1] });
  });

  it('gives a one-platform read the same counts', async () => {
    const r = await s.app.inject({
      method: 'GET',
      url: `/api/dashboard/projects/${project.projectId}/releases?from=${oldDay}&to=${today}&platform=ios`,
      headers: owner.headers,
    });
    expect(r.statusCode, r.body).toBe(200);
    const v = Object.fromEntries(
      (r.json().data as { appVersion: string; sessions: number }[]).map((x) => [x.appVersion, x.sessions]),
    );
    expect(v).toEqual({ '1.0': 4, '2.0': 3 });
  });
});
