import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addMember, dashboardProject, signup, type Account } from '../helpers/accounts.ts';
import { crash, sessionStart } from '../helpers/payloads.ts';
import { backfillSessionFacts } from '../../src/repos/sessionFactsBackfill.ts';
import { factRow } from '../../src/repos/sessionFacts.ts';
import { readMigrations } from '../../src/stores/migrations.ts';
import { randomUUID } from 'node:crypto';
import path from 'node:path';

// Release health and a crash group's activity over the real HTTP stack and the real stores: two
// releases (one bad), a regression from a third, the figures on the page, in the export (JSON and
// CSV) and after the start-up backfill; the group's history, assignee, comments and chart.

// The cells here hold no comma, quote or line break (strings are quoted, numbers not).
const parseCsv = (text: string) =>
  text
    .trim()
    .split(/\r?\n/)
    .map((l) => l.split(',').map((c) => c.replace(/^"(.*)"$/, '$1')));

let s: TestServer;
let owner: Account;
let member: Account;
let project: { projectId: string; auth: { authorization: string } };
const HOUR = 3_600_000;
const now = Date.now();
// Two hours ago: inside the last 24 h, and not in the future for any clock.
const at = now - 2 * HOUR;
const day = new Date(at).toISOString().slice(0, 10);
const STACK_BAD = 'at render (list.js:42:7)\nat draw (view.js:3:1)\nat frame (loop.js:9:2)';

async function post(url: string, payload: object) {
  const r = await s.app.inject({ method: 'POST', url, headers: project.auth, payload });
  expect(r.statusCode, `${url} ${r.body}`).toBeLessThan(300);
}

let crashesSent = 0;
async function session(appVersion: string, userId: string, crashes: { fatal: boolean; stack?: string }[] = []) {
  const start = sessionStart({
    startedAt: at,
    userId,
    device: { ...sessionStart().device, appVersion, platform: 'ios' },
  });
  await post('/ingest/session', start);
  for (const [i, c] of crashes.entries()) {
    await post(
      '/ingest/crash',
      crash(start.sessionId, {
        isFatal: c.fatal,
        handled: !c.fatal,
        timestamp: at + 1000 * ++crashesSent + i,
        ...(c.stack ? { stackTrace: c.stack } : {}),
      }),
    );
  }
  return start.sessionId;
}

const dash = (url: string, a: Account = owner) => s.app.inject({ method: 'GET', url, headers: a.headers });
const base = () => `/api/dashboard/projects/${project.projectId}`;
type Row = Record<string, unknown>;
const byVersion = (rows: Row[]) => Object.fromEntries(rows.map((r) => [r.appVersion as string, r]));

let groupId: string;

beforeAll(async () => {
  s = await startTestServer({ RATE_LIMIT_AUTH_PER_MIN: '1000' });
  owner = await signup(s);
  member = await signup(s);
  await addMember(s, owner, member);
  project = await dashboardProject(s, owner);
  // 1.0: four users, no crash. 2.0: four sessions of three users, one fatal crash, one handled error.
  for (const u of ['a', 'b', 'c', 'd']) await session('1.0', `u-${u}`);
  await session('2.0', 'u-e');
  await session('2.0', 'u-f', [{ fatal: false }]);
  await session('2.0', 'u-g');
  await session('2.0', 'u-g', [{ fatal: true, stack: STACK_BAD }]);
});
afterAll(async () => {
  await s?.close();
});

describe('release health', () => {
  it('gives each release its sessions, users, crash-free shares, adoption and new groups', async () => {
    const r = await dash(`${base()}/releases?from=${day}&to=${day}`);
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    expect(body.total).toBe(2);
    const v = byVersion(body.data);
    expect(v['1.0']).toMatchObject({
      platform: null,
      sessions: 4,
      users: 4,
      crashedSessions: 0,
      crashedUsers: 0,
      crashFreeSessions: 100,
      crashFreeUsers: 100,
      adoption24h: 50,
      adoption7d: 50,
      newGroups: 0,
      regressedGroups: 0,
    });
    // The handled error does not count against 2.0; the fatal crash does (1 of 4 sessions, 1 of 3 users).
    expect(v['2.0']).toMatchObject({
      platform: null,
      sessions: 4,
      users: 3,
      crashedSessions: 1,
      crashedUsers: 1,
      crashFreeSessions: 75,
      crashFreeUsers: 66.67,
      adoption24h: 50,
      adoption7d: 50,
      newGroups: 2,
      regressedGroups: 0,
      previousVersion: '1.0',
      // Wilson 95 %: 3 of 4 is 30.06–95.45 %, overlapping 1.0's 51.01–100 %: not significantly worse
      crashFreeSessionsInterval: { low: 30.06, high: 95.45 },
      significantlyWorse: false,
    });
    // one row per platform under the version
    expect((v['2.0']!.platforms as Row[]).map((p) => [p.platform, p.sessions, p.crashFreeSessions])).toEqual([
      ['ios', 4, 75],
    ]);
    // "last seen" is the latest session start itself, never the end of its hour
    expect(Date.parse(v['1.0']!.lastSeenAt as string)).toBe(at);
    expect(Date.parse(v['2.0']!.firstSeenAt as string)).toBeLessThanOrEqual(at);
    expect(Date.parse(v['2.0']!.lastSeenAt as string)).toBeGreaterThanOrEqual(at);
    // the daily series of each release, for the trend charts
    expect(body.daily).toEqual(
      expect.arrayContaining([
        { day, appVersion: '2.0', platform: null, sessions: 4, users: 3, crashFreeSessions: 75, crashFreeUsers: 66.67 },
        { day, appVersion: '1.0', platform: null, sessions: 4, users: 4, crashFreeSessions: 100, crashFreeUsers: 100 },
      ]),
    );
    // another platform has none of them
    expect((await dash(`${base()}/releases?from=${day}&to=${day}&platform=android`)).json().data).toEqual([]);
    const cmp = (
      await dash(`${base()}/releases/compare?from=${day}&to=${day}&a=1.0&aPlatform=ios&b=2.0&bPlatform=ios`)
    ).json();
    expect([cmp.a.crashFreeSessions, cmp.b.crashFreeSessions]).toEqual([100, 75]);
    expect(cmp.daily).toHaveLength(2);
    // another team's user sees nothing of it
    expect((await dash(`${base()}/releases`, await signup(s))).statusCode).toBe(404);
    expect((await dash(`${base()}/releases?from=2026-02-30`)).statusCode).toBe(400);
  });

  it('a retried session start and crash count once', async () => {
    const start = sessionStart({
      startedAt: at,
      userId: 'u-h',
      device: { ...sessionStart().device, appVersion: '2.1', platform: 'android' },
    });
    await post('/ingest/session', start);
    await post('/ingest/session', start);
    const c = crash(start.sessionId, { timestamp: at + 5 });
    await post('/ingest/crash', c);
    await post('/ingest/crash', c);
    const v = byVersion((await dash(`${base()}/releases?from=${day}&to=${day}&platform=android`)).json().data);
    expect(v['2.1']).toMatchObject({
      sessions: 1,
      users: 1,
      crashedSessions: 1,
      crashFreeSessions: 0,
      adoption24h: 100,
    });
  });

  it("pages the releases: each page its own rows, every version's daily series, together the whole list", async () => {
    const whole = (await dash(`${base()}/releases?from=${day}&to=${day}&platform=ios`)).json();
    expect(whole.total).toBe(2);
    const pages = [];
    for (const page of [1, 2]) {
      const r = await dash(`${base()}/releases?from=${day}&to=${day}&platform=ios&limit=1&page=${page}`);
      expect(r.statusCode, r.body).toBe(200);
      const body = r.json();
      expect(body).toMatchObject({ total: 2, page, limit: 1, pages: 2 });
      expect(body.data).toHaveLength(1);
      // the charts reach every release of the range, whatever the page
      expect(new Set(body.daily.map((d: Row) => d.appVersion))).toEqual(new Set(['1.0', '2.0']));
      expect(body.versions.map((x: Row) => x.appVersion)).toEqual(['2.0', '1.0']);
      pages.push(...body.data);
    }
    expect(pages).toEqual(whole.data);
    const past = (await dash(`${base()}/releases?from=${day}&to=${day}&platform=ios&limit=1&page=3`)).json();
    expect(past).toMatchObject({ data: [], total: 2, page: 3, pages: 2 });
  });

  it('exports the same figures as JSON and CSV, and again after the start-up backfill', async () => {
    const json = await s.app.inject({
      method: 'GET',
      url: `/export/releases?from=${day}&to=${day}&platform=ios`,
      headers: project.auth,
    });
    expect(json.statusCode, json.body).toBe(200);
    const e = json.json();
    expect(e).toMatchObject({ total: 2, page: 1, pages: 1 });
    expect(byVersion(e.data)['2.0']).toMatchObject({
      platform: 'ios',
      sessions: 4,
      users: 3,
      crashFreeSessions: 75,
      crashFreeUsers: 66.67,
      newGroups: 2,
    });
    const page = (await dash(`${base()}/releases?from=${day}&to=${day}&platform=ios`)).json();
    const fields = Object.keys(e.data[0]);
    const pick = (r: Row) => Object.fromEntries(fields.map((k) => [k, r[k]]));
    expect(byVersion(e.data)).toEqual(byVersion(page.data.flatMap((x: Row) => x.platforms as Row[]).map(pick)));

    const csv = await s.app.inject({
      method: 'GET',
      url: `/export/releases?from=${day}&to=${day}&platform=ios&format=csv`,
      headers: project.auth,
    });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-disposition']).toContain('releases.csv');
    const [header, ...lines] = parseCsv(csv.body);
    expect(header).toEqual([
      'appVersion',
      'platform',
      'sessions',
      'users',
      'crashedSessions',
      'crashedUsers',
      'crashFreeSessions',
      'crashFreeUsers',
      'adoption24h',
      'adoption7d',
      'newGroups',
      'regressedGroups',
      'firstSeenAt',
      'lastSeenAt',
    ]);
    const two = lines.find((l) => l[0] === '2.0')!;
    expect(two.slice(0, 8)).toEqual(['2.0', 'ios', '4', '3', '1', '1', '75', '66.67']);
    const pq = await s.app.inject({
      method: 'GET',
      url: `/export/releases?from=${day}&to=${day}&format=parquet`,
      headers: project.auth,
    });
    expect(pq.statusCode).toBe(200);
    expect(pq.rawPayload.subarray(0, 4).toString()).toBe('PAR1');
    expect(
      (await s.app.inject({ method: 'GET', url: '/export/releases?from=nope', headers: project.auth })).statusCode,
    ).toBe(400);

    // Sessions that predate release health: the facts are copied from Postgres once, at start-up.
    const { pg, ch } = s.svc.stores;
    await ch.exec('TRUNCATE TABLE session_facts');
    await ch.exec('TRUNCATE TABLE release_health_daily');
    await ch.exec('TRUNCATE TABLE release_adoption_hourly');
    await ch.exec('TRUNCATE TABLE release_sessions');
    await ch.exec('TRUNCATE TABLE release_seen');
    expect(
      (
        await s.app.inject({ method: 'GET', url: `/export/releases?from=${day}&to=${day}`, headers: project.auth })
      ).json().total,
    ).toBe(0);
    await pg.query('DELETE FROM session_facts_backfill');
    await pg.tx((q) => backfillSessionFacts(q, ch));
    expect(await pg.tx((q) => backfillSessionFacts(q, ch))).toBe(0); // done once
    const again = await s.app.inject({
      method: 'GET',
      url: `/export/releases?from=${day}&to=${day}&platform=ios`,
      headers: project.auth,
    });
    expect(again.json().data).toEqual(e.data);

    // An install that had the facts before the exact counts: migration 010 copies them (twice is harmless).
    await ch.exec('TRUNCATE TABLE release_sessions');
    await ch.exec('TRUNCATE TABLE release_seen');
    const m010 = readMigrations(path.join(import.meta.dirname, '../../clickhouse')).find((m) => m.version === 10)!;
    const copies = m010.statements.filter((x) => x.startsWith('INSERT'));
    expect(copies).toHaveLength(2);
    for (const x of [...copies, ...copies]) await ch.exec(x);
    const migrated = await s.app.inject({
      method: 'GET',
      url: `/export/releases?from=${day}&to=${day}&platform=ios`,
      headers: project.auth,
    });
    expect(migrated.json().data).toEqual(e.data);
  });

  it('counts sessions exactly, sorts versions as semver, and marks a release worse only when the intervals say so', async () => {
    const p = await dashboardProject(s, owner, 'Rollout');
    const rows: ReturnType<typeof factRow>[] = [];
    const add = (appVersion: string, platform: string, n: number, crashed: number, startedAt = at) => {
      for (let i = 0; i < n; i++) {
        const f = {
          project_id: p.projectId,
          id: randomUUID(),
          started_at: startedAt + i,
          app_version: appVersion,
          platform,
          user_id: `u${i % 50}`,
          device_fingerprint: 'd',
          status: 'active' as const,
        };
        // every fact sent twice (a retry): counted once
        rows.push(factRow(f, false), factRow(f, false));
        if (i < crashed) rows.push(factRow(f, true), factRow(f, true));
      }
    };
    add('1.9.0', 'ios', 300, 3);
    add('1.9.0', 'android', 100, 1, at + 1000);
    add('1.10.0', 'ios', 300, 30); // 90 % against 99 %: significantly worse
    add('1.10.1', 'ios', 8, 1, at + 60_000); // a small early rollout, 87.5 %: too few sessions to tell
    await s.svc.stores.ch.insert('session_facts', rows);
    const url = `/api/dashboard/projects/${p.projectId}/releases?from=${day}&to=${day}`;
    const r = (await dash(url)).json();
    expect(r.data.map((x: Row) => [x.appVersion, x.sessions, x.crashedSessions])).toEqual([
      ['1.10.1', 8, 1],
      ['1.10.0', 300, 30],
      ['1.9.0', 400, 4],
    ]);
    const v = byVersion(r.data);
    expect(v['1.9.0']!.platforms).toHaveLength(2);
    expect(v['1.9.0']).toMatchObject({ crashFreeSessions: 99, previousVersion: null, significantlyWorse: false });
    expect(v['1.10.0']).toMatchObject({ crashFreeSessions: 90, previousVersion: '1.9.0', significantlyWorse: true });
    expect(v['1.10.1']).toMatchObject({
      crashFreeSessions: 87.5,
      previousVersion: '1.10.0',
      significantlyWorse: false,
    });
    expect(Date.parse(v['1.10.1']!.lastSeenAt as string)).toBe(at + 60_000 + 7);
    expect(r.versions.map((x: Row) => x.appVersion)).toEqual(['1.10.1', '1.10.0', '1.9.0']);
    const order = async (q: string) => (await dash(`${url}&${q}`)).json().data.map((x: Row) => x.appVersion);
    expect(await order('sort=version&order=asc')).toEqual(['1.9.0', '1.10.0', '1.10.1']);
    expect(await order('sort=sessions')).toEqual(['1.9.0', '1.10.0', '1.10.1']);
    expect(await order('sort=crashFree&order=asc')).toEqual(['1.10.1', '1.10.0', '1.9.0']);
    expect(await order('sort=adoption')).toEqual(['1.9.0', '1.10.0', '1.10.1']);
    expect(await order('sort=lastSeen')).toEqual(['1.10.1', '1.9.0', '1.10.0']);
    expect((await dash(`${url}&sort=nope`)).statusCode).toBe(400);
    // compare over all platforms by default, or one platform
    const cmp = (
      await dash(`/api/dashboard/projects/${p.projectId}/releases/compare?from=${day}&to=${day}&a=1.9.0&b=1.10.0`)
    ).json();
    expect([cmp.a.sessions, cmp.b.sessions, cmp.bSignificantlyWorse]).toEqual([400, 300, true]);
    const ios = (
      await dash(
        `/api/dashboard/projects/${p.projectId}/releases/compare?from=${day}&to=${day}&a=1.9.0&aPlatform=ios&b=1.10.1`,
      )
    ).json();
    expect([ios.a.sessions, ios.a.platform, ios.b.sessions, ios.bSignificantlyWorse]).toEqual([300, 'ios', 8, false]);
  });
});

describe('a crash group: history, regression, assignee, comments, chart', () => {
  it('records who moved it, a regression from a new release, and shows it on the release', async () => {
    const groups = (await dash(`${base()}/crash-groups`)).json().data as {
      id: string;
      message: string;
      stackHead: string;
    }[];
    groupId = groups.find((g) => g.stackHead.startsWith('at render'))!.id;
    const g = `${base()}/crash-groups/${groupId}`;
    const patch = (headers: Record<string, string>, url: string, status: string) =>
      s.app.inject({ method: 'PATCH', url, headers, payload: { status } });
    expect((await patch(owner.headers, g, 'acknowledged')).statusCode).toBe(200);
    expect((await patch(owner.headers, g, 'acknowledged')).statusCode).toBe(200); // no change, no entry
    expect(
      (await patch(s.admin, `/api/projects/${project.projectId}/crash-groups/${groupId}`, 'resolved')).statusCode,
    ).toBe(200);
    let d = (await dash(`${g}/history`)).json();
    expect(d.history.map((h: Row) => [h.kind, h.fromStatus, h.toStatus, h.actor])).toEqual([
      ['status', 'open', 'acknowledged', owner.email],
      ['status', 'acknowledged', 'resolved', 'admin'],
    ]);
    expect(d.history[0].actorUserId).toBe(owner.userId);

    // 3.0 crashes the same way: a regression reopens it
    await session('3.0', 'u-z', [{ fatal: true, stack: STACK_BAD }]);
    d = (await dash(`${g}/history`)).json();
    expect(d.status).toBe('open');
    expect(d.badge).toBe('regressed');
    expect(d.history.at(-1)).toMatchObject({
      kind: 'regression',
      fromStatus: 'resolved',
      toStatus: 'open',
      actor: 'flightrec',
      appVersion: '3.0',
      platform: 'ios',
    });
    const admin = (
      await s.app.inject({
        method: 'GET',
        url: `/api/projects/${project.projectId}/crash-groups/${groupId}/history`,
        headers: s.admin,
      })
    ).json();
    expect(admin.history).toEqual(d.history);

    const v = byVersion((await dash(`${base()}/releases?from=${day}&platform=ios`)).json().data);
    expect(v['3.0']).toMatchObject({ sessions: 1, crashFreeSessions: 0, regressedGroups: 1, newGroups: 0 });
    expect(v['2.0']).toMatchObject({ regressedGroups: 0 });
  });

  it('is assigned to a member of the team only, and carries a comment thread', async () => {
    const g = `${base()}/crash-groups/${groupId}`;
    const put = (userId: string | null, headers = owner.headers) =>
      s.app.inject({ method: 'PUT', url: `${g}/assignee`, headers, payload: { userId } });
    const outsider = await signup(s);
    const refused = await put(outsider.userId);
    expect(refused.statusCode).toBe(422);
    expect(refused.json().details[0].path).toBe('/userId');
    const ok = await put(member.userId);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().assignee).toMatchObject({ userId: member.userId, email: member.email });
    expect(
      ok
        .json()
        .members.map((m: Row) => m.email)
        .sort(),
    ).toEqual([owner.email, member.email].sort());
    expect(ok.json().history.at(-1)).toMatchObject({ kind: 'assignee', actor: owner.email, detail: member.email });

    const c = await s.app.inject({
      method: 'POST',
      url: `${g}/comments`,
      headers: member.headers,
      payload: { body: '  Looks like the list adapter. ' },
    });
    expect(c.statusCode, c.body).toBe(201);
    expect(
      (await s.app.inject({ method: 'POST', url: `${g}/comments`, headers: member.headers, payload: { body: '   ' } }))
        .statusCode,
    ).toBe(422);
    const adminComment = await s.app.inject({
      method: 'POST',
      url: `/api/projects/${project.projectId}/crash-groups/${groupId}/comments`,
      headers: s.admin,
      payload: { body: 'Fixed in 3.1' },
    });
    expect(adminComment.statusCode, adminComment.body).toBe(201);
    const d = (await dash(`${g}/history`)).json();
    expect(d.comments.map((x: Row) => [x.author, x.body])).toEqual([
      [member.email, 'Looks like the list adapter.'],
      ['admin', 'Fixed in 3.1'],
    ]);
    expect((await put(null)).json().assignee).toBeNull();
    // another team sees none of it
    expect((await s.app.inject({ method: 'GET', url: `${g}/history`, headers: outsider.headers })).statusCode).toBe(
      404,
    );
    expect(
      (
        await s.app.inject({
          method: 'GET',
          url: `/api/projects/${project.projectId}/crash-groups/00000000-0000-4000-8000-000000000000/history`,
          headers: s.admin,
        })
      ).statusCode,
    ).toBe(404);
  });

  it('charts occurrences and users over 24 h, 14 d and 90 d, with the first and last release', async () => {
    const g = `${base()}/crash-groups/${groupId}`;
    const h24 = (await dash(`${g}/activity?range=24h`)).json();
    expect(h24.data).toHaveLength(24);
    expect(h24.data.reduce((n: number, b: Row) => n + (b.occurrences as number), 0)).toBe(2);
    expect(h24.data.find((b: Row) => b.at === new Date(Math.floor(at / HOUR) * HOUR).toISOString())).toMatchObject({
      occurrences: 2,
      users: 2,
    });
    expect(h24).toMatchObject({ range: '24h', firstRelease: '2.0', lastRelease: '3.0', badge: 'regressed' });
    const d14 = (await dash(`${g}/activity?range=14d`)).json();
    expect(d14.data).toHaveLength(14);
    expect(d14.data.find((b: Row) => (b.at as string).startsWith(day))).toMatchObject({ occurrences: 2, users: 2 });
    expect((await dash(`${g}/activity?range=90d`)).json().data).toHaveLength(90);
    expect((await dash(`${g}/activity?range=1y`)).statusCode).toBe(400);
  });
});
