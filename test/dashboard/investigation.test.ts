import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { dashboardProject, signup, type Account } from '../helpers/accounts.ts';
import { T0, crash, navigate, networkEvent, sessionStart } from '../helpers/payloads.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ RATE_LIMIT_AUTH_PER_MIN: '1000' });
});
afterAll(async () => {
  await s?.close();
});

const get = (url: string, a: Account) => s.app.inject({ method: 'GET', url, headers: a.headers });
const send = (method: 'POST' | 'PATCH', url: string, a: Account, payload?: object) =>
  s.app.inject({ method, url, headers: a.headers, payload });

async function ingest(auth: Record<string, string>, url: string, payload: object) {
  const r = await s.app.inject({ method: 'POST', url, headers: auth, payload });
  expect(r.statusCode, `${url} ${r.body}`).toBeLessThan(300);
}

describe('projects and keys: names, visible prefixes, renames', () => {
  it('shows each key by its prefix and name, renames keys and projects, never another team’s', async () => {
    const a = await signup(s);
    const created = await send('POST', '/api/dashboard/projects', a, { name: '  Shop iOS ', keyName: 'iOS app' });
    expect(created.statusCode).toBe(201);
    const { project, apiKey, key } = created.json();
    expect(project.name).toBe('Shop iOS');
    expect(key).toMatchObject({ prefix: apiKey.slice(0, 8), name: 'iOS app' });
    const base = `/api/dashboard/projects/${project.id}`;

    const second = await send('POST', `${base}/keys`, a, { name: 'CI export' });
    expect(second.json().key).toMatchObject({ name: 'CI export', prefix: second.json().apiKey.slice(0, 8) });
    const unnamed = await s.app.inject({ method: 'POST', url: `${base}/keys`, headers: a.headers });
    expect(unnamed.statusCode).toBe(201);
    expect(unnamed.json().key.name).toBeNull();

    const renamed = await send('PATCH', `${base}/keys/${unnamed.json().key.id}`, a, { name: 'Android app' });
    expect(renamed.json()).toMatchObject({ name: 'Android app', prefix: unnamed.json().apiKey.slice(0, 8) });
    const keys = (await get('/api/dashboard/projects', a)).json().data[0].keys;
    expect(keys.map((k: { name: string }) => k.name).sort()).toEqual([
      'Android app',
      'App (ingest only)',
      'CI export',
      'iOS app',
    ]);
    for (const k of keys) expect(k.prefix).toMatch(/^frk_[0-9A-Za-z]{4}$/);

    const p2 = await send('PATCH', base, a, { name: 'Shop iOS (prod)' });
    expect(p2.json()).toMatchObject({ name: 'Shop iOS (prod)' });
    expect((await send('PATCH', base, a, { name: '' })).statusCode).toBe(422);

    const bob = await signup(s);
    expect((await send('PATCH', `${base}/keys/${unnamed.json().key.id}`, bob, { name: 'mine' })).statusCode).toBe(404);
    expect((await send('PATCH', base, bob, { name: 'mine' })).statusCode).toBe(404);
    // a key of another project is not found under this one
    const other = await dashboardProject(s, a, 'Other');
    expect(
      (await send('POST', `/api/dashboard/projects/${other.projectId}/keys/${unnamed.json().key.id}/deactivate`, a, {}))
        .statusCode,
    ).toBe(404);
  });
});

describe('sessions list: search, filters, sorting, any page', () => {
  it('finds sessions by user or session id, filters on platform, version, crash and network errors, sorts', async () => {
    const a = await signup(s);
    const p = await dashboardProject(s, a);
    const base = `/api/dashboard/projects/${p.projectId}/sessions`;
    const mk = (i: number, platform: string, appVersion: string, userId: string) =>
      sessionStart({
        startedAt: T0 + i * 3_600_000,
        userId,
        device: { platform, appVersion, osVersion: '1', model: 'm' },
      });
    const s1 = mk(0, 'ios', '1.0', 'alice@example.com');
    const s2 = mk(1, 'android', '1.1', 'bob');
    const s3 = mk(2, 'android', '1.0', 'Alina');
    for (const x of [s1, s2, s3]) await ingest(p.auth, '/ingest/session', x);
    await ingest(p.auth, '/ingest/session/end', { sessionId: s1.sessionId, endedAt: T0 + 50_000 });
    await ingest(p.auth, '/ingest/session/end', { sessionId: s2.sessionId, endedAt: T0 + 3_600_000 + 10_000 });
    await ingest(p.auth, '/ingest/events', {
      sessionId: s2.sessionId,
      events: [navigate(s2.sessionId, 0), networkEvent(s2.sessionId, 1, 500), navigate(s2.sessionId, 2)],
    });
    await ingest(p.auth, '/ingest/events', { sessionId: s3.sessionId, events: [navigate(s3.sessionId, 0)] });
    await ingest(p.auth, '/ingest/crash', crash(s3.sessionId, { isFatal: false, handled: true }));
    await s.settled();

    const ids = async (q: string) => {
      const r = await get(`${base}${q}`, a);
      expect(r.statusCode, r.body).toBe(200);
      return r.json().data.map((x: { id: string }) => x.id);
    };
    expect(await ids('?q=ali')).toEqual([s3.sessionId, s1.sessionId]);
    expect(await ids('?q=ALICE@example.com')).toEqual([s1.sessionId]);
    expect(await ids(`?q=${s2.sessionId.slice(0, 8).toUpperCase()}`)).toEqual([s2.sessionId]);
    expect(await ids('?q=%25')).toEqual([]);
    expect(await ids('?platform=android')).toEqual([s3.sessionId, s2.sessionId]);
    expect(await ids('?appVersion=1.0&platform=android')).toEqual([s3.sessionId]);
    expect(await ids('?hasCrash=true')).toEqual([s3.sessionId]);
    expect(await ids('?hasCrash=false')).toEqual([s2.sessionId, s1.sessionId]);
    expect(await ids('?networkErrors=true')).toEqual([s2.sessionId]);
    expect(await ids('?sort=started&order=asc')).toEqual([s1.sessionId, s2.sessionId, s3.sessionId]);
    // duration: the active session (no duration) last either way
    expect(await ids('?sort=duration&order=desc')).toEqual([s1.sessionId, s2.sessionId, s3.sessionId]);
    expect(await ids('?sort=duration&order=asc')).toEqual([s2.sessionId, s1.sessionId, s3.sessionId]);
    expect(await ids('?sort=events&order=desc')).toEqual([s2.sessionId, s3.sessionId, s1.sessionId]);
    const page3 = (await get(`${base}?sort=events&order=asc&limit=1&page=3`, a)).json();
    expect(page3).toMatchObject({ total: 3, page: 3, pages: 3, data: [{ id: s2.sessionId, eventCount: 3 }] });
    expect((await get(`${base}?sort=users`, a)).statusCode).toBe(400);
    expect((await get(`${base}?from=2026-01-03&to=2026-01-01`, a)).json()).toEqual({
      error: 'The start date must be before the end date',
      code: 'invalid_parameter',
    });

    const facets = (await get(`${base}/facets`, a)).json();
    expect(facets.platforms).toEqual(['android', 'ios']);
    expect(facets.appVersions.sort()).toEqual(['1.0', '1.1']);
  });
});

describe('crash group page', () => {
  it('lists occurrences with their sessions, counts users, shows the whole latest trace and a summary that agrees', async () => {
    const a = await signup(s);
    const p = await dashboardProject(s, a);
    const base = `/api/dashboard/projects/${p.projectId}`;
    // a long trace: the group key reads its first five lines, the page shows all of it
    const frames = Array.from({ length: 400 }, (_, i) => `at frame${i} (File${i}.swift:${i})`);
    const stackTrace = frames.join('\n');
    const sessions = [];
    for (let i = 0; i < 7; i++) {
      // seven sessions of four users on one phone model; one session has no user
      const x = sessionStart({
        startedAt: T0 + i * 60_000,
        userId: i === 6 ? undefined : `user-${i % 4}`,
        device: {
          platform: 'ios',
          osVersion: '17.2',
          model: 'iPhone15,2',
          brand: 'Apple',
          appVersion: i < 4 ? '2.0' : '2.1',
        },
      });
      await ingest(p.auth, '/ingest/session', x);
      sessions.push(x);
    }
    // first occurrence handled, later ones fatal: the group becomes fatal
    for (const [i, x] of sessions.entries()) {
      await ingest(
        p.auth,
        '/ingest/crash',
        crash(x.sessionId, {
          stackTrace,
          message: 'NSRangeException',
          isFatal: i > 0,
          handled: i === 0,
          timestamp: T0 + i * 60_000 + 5_000,
        }),
      );
    }
    const list = (await get(`${base}/crash-groups`, a)).json();
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({ occurrenceCount: 7, affectedDevices: 1, usersAffected: 4 });
    const id = list.data[0].id;

    // the alert worker writes the deterministic summary at the first (handled) occurrence
    await (await s.stores()).pg.query(
      `UPDATE crash_groups SET summary = 'Handled exception: "NSRangeException"', summary_source = 'deterministic', summary_at = now() WHERE id = $1`,
      [id],
    );
    const g = (await get(`${base}/crash-groups/${id}`, a)).json();
    expect(g).toMatchObject({
      isFatal: true,
      handled: false,
      usersAffected: 4,
      affectedDevices: 1,
      occurrenceCount: 7,
    });
    expect(g.appVersionCounts).toEqual([
      { appVersion: '2.0', occurrences: 4 },
      { appVersion: '2.1', occurrences: 3 },
    ]);
    expect(g.latest).toMatchObject({
      sessionId: sessions[6]!.sessionId,
      userId: null,
      appVersion: '2.1',
      model: 'iPhone15,2',
      stackTraceComplete: true,
    });
    expect(g.latest.stackTrace).toBe(stackTrace);
    expect(g.summary.origin).toBe('stack-trace');
    expect(g.summary.text).toMatch(/^Fatal crash: "NSRangeException" in frame0 \(File0\.swift:0\), called from frame1/);
    expect(g.summary.text).toContain('Latest on ios 17.2, Apple iPhone15,2, app 2.1');

    // an AI summary says which model wrote it and when
    await (await s.stores()).pg.query(
      `UPDATE crash_groups SET summary = 'The app reads past the end of an array.', summary_source = 'openai:gpt-4o-mini', summary_at = '2026-01-01T00:10:00Z' WHERE id = $1`,
      [id],
    );
    expect((await get(`${base}/crash-groups/${id}`, a)).json().summary).toEqual({
      text: 'The app reads past the end of an array.',
      origin: 'ai',
      model: 'gpt-4o-mini',
      writtenAt: '2026-01-01T00:10:00.000Z',
    });

    const occ = (await get(`${base}/crash-groups/${id}/occurrences?limit=3`, a)).json();
    expect(occ).toMatchObject({ total: 7, page: 1, limit: 3, pages: 3 });
    expect(occ.data.map((o: { sessionId: string }) => o.sessionId)).toEqual([
      sessions[6]!.sessionId,
      sessions[5]!.sessionId,
      sessions[4]!.sessionId,
    ]);
    expect(occ.data[1]).toMatchObject({
      userId: 'user-1',
      appVersion: '2.1',
      platform: 'ios',
      brand: 'Apple',
      model: 'iPhone15,2',
      isFatal: true,
    });
    const last = (await get(`${base}/crash-groups/${id}/occurrences?limit=3&page=3`, a)).json();
    expect(last.data.map((o: { sessionId: string }) => o.sessionId)).toEqual([sessions[0]!.sessionId]);
    expect((await get(`${base}/crash-groups/${crypto.randomUUID()}/occurrences`, a)).statusCode).toBe(404);

    // open → resolved in one step answers the whole page
    const resolved = (await send('PATCH', `${base}/crash-groups/${id}`, a, { status: 'resolved' })).json();
    expect(resolved).toMatchObject({ status: 'resolved', usersAffected: 4, latest: { stackTraceComplete: true } });

    const bob = await signup(s);
    expect((await get(`${base}/crash-groups/${id}/occurrences`, bob)).statusCode).toBe(404);
  });
});

describe('teams', () => {
  it('lists every team with its members in one answer', async () => {
    const a = await signup(s);
    const b = await signup(s);
    const invited = await send('POST', `/api/dashboard/teams/${a.teamId}/members`, a, { email: b.email });
    expect(invited.statusCode).toBe(201);
    // b joins by accepting the invitation
    expect(
      (await send('POST', `/api/dashboard/invitations/${invited.json().invitation.id}/accept`, b)).statusCode,
    ).toBe(200);
    const teams = (await get('/api/dashboard/teams', b)).json().data;
    expect(teams.map((t: { members: unknown[] }) => t.members.length)).toEqual([1, 2]);
    expect((await send('POST', `/api/dashboard/teams/${a.teamId}/members`, a, { email: b.email })).statusCode).toBe(
      409,
    );
    expect((await send('POST', `/api/dashboard/teams/${a.teamId}/members`, b, { email: a.email })).statusCode).toBe(
      403,
    );
  });
});
