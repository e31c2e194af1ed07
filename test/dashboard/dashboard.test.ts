import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { dashboardProject, signup } from '../helpers/accounts.ts';
import {
  T0,
  crash,
  customEvent,
  navigate,
  networkEvent,
  networkRequest,
  sessionStart,
  tapEvent,
} from '../helpers/payloads.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ RATE_LIMIT_AUTH_PER_MIN: '1000' });
});
afterAll(async () => {
  await s?.close();
});

const get = (url: string, headers: Record<string, string>) => s.app.inject({ method: 'GET', url, headers });

describe('team scoping', () => {
  it("shows a member only their teams' projects; another team's project is 404 on every route", async () => {
    const alice = await signup(s);
    const bob = await signup(s);
    const p = await dashboardProject(s, alice, 'Alice app');
    const mine = await get('/api/dashboard/projects', alice.headers);
    expect(mine.json().data.map((x: { id: string }) => x.id)).toEqual([p.projectId]);
    // the project's first key and the app's ingest-only key of the setup snippet
    expect(mine.json().data[0].keys).toHaveLength(2);
    expect(mine.json().data[0].keys[0]).not.toHaveProperty('apiKey');
    expect((await get('/api/dashboard/projects', bob.headers)).json().data).toEqual([]);

    const base = `/api/dashboard/projects/${p.projectId}`;
    for (const url of [
      `${base}/sessions`,
      `${base}/crash-groups`,
      `${base}/daily`,
      `${base}/sessions/${crypto.randomUUID()}`,
    ]) {
      const r = await get(url, bob.headers);
      expect(r.statusCode, url).toBe(404);
      expect(r.json()).toEqual({ error: 'Project not found', code: 'project_not_found' });
    }
    const key = await s.app.inject({ method: 'POST', url: `${base}/keys`, headers: bob.headers });
    expect(key.statusCode).toBe(404);
    const patch = await s.app.inject({
      method: 'PATCH',
      url: base,
      headers: bob.headers,
      payload: { alertEmails: ['x@example.com'] },
    });
    expect(patch.statusCode).toBe(404);
    // a project made with the admin API belongs to no team: no dashboard user sees it
    const adminProject = await s.createProject();
    expect((await get(`/api/dashboard/projects/${adminProject.projectId}/sessions`, alice.headers)).statusCode).toBe(
      404,
    );

    // once Alice invites Bob to her team and he accepts, he sees the project
    const add = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/teams/${alice.teamId}/members`,
      headers: alice.headers,
      payload: { email: bob.email },
    });
    expect(add.statusCode).toBe(201);
    expect((await get(`${base}/sessions`, bob.headers)).statusCode).toBe(404);
    const accept = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/invitations/${add.json().invitation.id}/accept`,
      headers: bob.headers,
    });
    expect(accept.statusCode).toBe(200);
    expect((await get(`${base}/sessions`, bob.headers)).statusCode).toBe(200);
    expect((await get('/api/dashboard/projects', bob.headers)).json().data.map((x: { id: string }) => x.id)).toEqual([
      p.projectId,
    ]);
    // a member cannot manage members
    const byMember = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/teams/${alice.teamId}/members`,
      headers: bob.headers,
      payload: { email: alice.email },
    });
    expect(byMember.statusCode).toBe(403);
    const remove = await s.app.inject({
      method: 'DELETE',
      url: `/api/dashboard/teams/${alice.teamId}/members/${bob.userId}`,
      headers: alice.headers,
    });
    expect(remove.statusCode).toBe(200);
    expect((await get(`${base}/sessions`, bob.headers)).statusCode).toBe(404);
  });

  it('requires a session', async () => {
    const r = await s.app.inject({ method: 'GET', url: '/api/dashboard/projects' });
    expect(r.statusCode).toBe(401);
  });
});

describe('projects and keys', () => {
  it('creates keys that work for ingestion, deactivates one (401), sets alert recipients', async () => {
    const a = await signup(s);
    const p = await dashboardProject(s, a);
    const base = `/api/dashboard/projects/${p.projectId}`;
    const k = await s.app.inject({ method: 'POST', url: `${base}/keys`, headers: a.headers });
    expect(k.statusCode).toBe(201);
    const second = { authorization: `Bearer ${k.json().apiKey}` };
    const ok = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: second, payload: sessionStart() });
    expect(ok.statusCode).toBe(201);
    const off = await s.app.inject({
      method: 'POST',
      url: `${base}/keys/${k.json().key.id}/deactivate`,
      headers: a.headers,
    });
    expect(off.statusCode).toBe(200);
    const refused = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: second,
      payload: sessionStart(),
    });
    expect(refused.statusCode).toBe(401);
    const keys = (await get('/api/dashboard/projects', a.headers)).json().data[0].keys;
    // the deactivated one, the project's first key and its app key
    expect(keys.map((x: { active: boolean }) => x.active).sort()).toEqual([false, true, true]);

    const emails = await s.app.inject({
      method: 'PATCH',
      url: base,
      headers: a.headers,
      payload: { alertEmails: ['Ops@Example.com', 'dev@example.com'] },
    });
    expect(emails.statusCode).toBe(200);
    expect(emails.json().alertEmails).toEqual(['ops@example.com', 'dev@example.com']);
    const bad = await s.app.inject({
      method: 'PATCH',
      url: base,
      headers: a.headers,
      payload: { alertEmails: ['nope'] },
    });
    expect(bad.statusCode).toBe(422);
  });
});

describe('sessions, timeline, crash groups, chart', () => {
  it('lists sessions with counts and flags, filters, pages, and shows a session in sequence order with its crash', async () => {
    const a = await signup(s);
    const p = await dashboardProject(s, a);
    const base = `/api/dashboard/projects/${p.projectId}`;
    const ingest = async (url: string, payload: object, code = 201) => {
      const r = await s.app.inject({ method: 'POST', url, headers: p.auth, payload });
      expect(r.statusCode, `${url} ${r.body}`).toBe(code);
    };
    const healthy = sessionStart({ startedAt: T0 });
    const failing = sessionStart({ startedAt: T0 + 86_400_000 });
    const crashed = sessionStart({ startedAt: T0 + 2 * 86_400_000 });
    for (const x of [healthy, failing, crashed]) await ingest('/ingest/session', x);
    await ingest('/ingest/session/end', { sessionId: healthy.sessionId, endedAt: T0 + 60_000 }, 200);
    // out of order, and one batch sent twice: the timeline is by sequenceNumber, counted once
    const events = [
      tapEvent(failing.sessionId, 2),
      navigate(failing.sessionId, 0),
      networkEvent(failing.sessionId, 1, 503),
      customEvent(failing.sessionId, 3),
    ];
    await ingest('/ingest/events', { sessionId: failing.sessionId, events: events.slice(0, 2) });
    await ingest('/ingest/events', { sessionId: failing.sessionId, events });
    await ingest('/ingest/network', { sessionId: failing.sessionId, requests: [networkRequest({ statusCode: 200 })] });
    await ingest('/ingest/events', {
      sessionId: crashed.sessionId,
      events: [navigate(crashed.sessionId, 0), navigate(crashed.sessionId, 1)],
    });
    await ingest('/ingest/crash', crash(crashed.sessionId, { timestamp: T0 + 1000 }));
    await s.settled();

    const all = await get(`${base}/sessions`, a.headers);
    expect(all.statusCode).toBe(200);
    const list = all.json();
    expect(list.total).toBe(3);
    expect(list.data.map((x: { id: string }) => x.id)).toEqual([
      crashed.sessionId,
      failing.sessionId,
      healthy.sessionId,
    ]);
    const byId = Object.fromEntries(list.data.map((x: { id: string }) => [x.id, x]));
    expect(byId[failing.sessionId]).toMatchObject({
      hasNetworkErrors: true,
      eventCount: 4,
      status: 'active',
      duration: null,
      platform: 'ios',
      appVersion: '1.4.0',
    });
    expect(byId[healthy.sessionId]).toMatchObject({
      hasNetworkErrors: false,
      eventCount: 0,
      status: 'completed',
      duration: 60_000,
    });
    expect(byId[crashed.sessionId]).toMatchObject({ status: 'crashed', hasCrash: true, eventCount: 2 });

    const crashedOnly = (await get(`${base}/sessions?status=crashed`, a.headers)).json();
    expect(crashedOnly.data.map((x: { id: string }) => x.id)).toEqual([crashed.sessionId]);
    const day2 = (await get(`${base}/sessions?from=2026-01-02&to=2026-01-02`, a.headers)).json();
    expect(day2.data.map((x: { id: string }) => x.id)).toEqual([failing.sessionId]);
    const page2 = (await get(`${base}/sessions?limit=2&page=2`, a.headers)).json();
    expect(page2).toMatchObject({ total: 3, page: 2, limit: 2, pages: 2 });
    expect(page2.data.map((x: { id: string }) => x.id)).toEqual([healthy.sessionId]);
    expect((await get(`${base}/sessions?from=yesterday`, a.headers)).statusCode).toBe(400);
    expect((await get(`${base}/sessions?status=lost`, a.headers)).statusCode).toBe(400);

    const timeline = (await get(`${base}/sessions/${failing.sessionId}/events`, a.headers)).json();
    expect(timeline.data.map((e: { sequenceNumber: number; type: string }) => [e.sequenceNumber, e.type])).toEqual([
      [0, 'navigate'],
      [1, 'network'],
      [2, 'tap'],
      [3, 'custom'],
    ]);
    expect(timeline.data[1].data.statusCode).toBe(503);
    // The failed-request verdict comes from the server (web/views/session.js keeps no rule of its own).
    expect(timeline.data.map((e: { failed?: boolean }) => e.failed)).toEqual([undefined, true, undefined, undefined]);
    expect(timeline.nextAfter).toBeNull();
    const paged = (await get(`${base}/sessions/${failing.sessionId}/events?limit=3`, a.headers)).json();
    expect(paged.nextAfter).toBe(2);
    const rest = (await get(`${base}/sessions/${failing.sessionId}/events?after=2`, a.headers)).json();
    expect(rest.data.map((e: { sequenceNumber: number }) => e.sequenceNumber)).toEqual([3]);

    const net = (await get(`${base}/sessions/${failing.sessionId}/network`, a.headers)).json();
    expect(net.total).toBe(2);
    expect(net.data.map((n: { statusCode: number; failed: boolean }) => [n.statusCode, n.failed])).toEqual([
      [503, true],
      [200, false],
    ]);

    const detail = (await get(`${base}/sessions/${crashed.sessionId}`, a.headers)).json();
    expect(detail.session.id).toBe(crashed.sessionId);
    expect(detail.crashes).toHaveLength(1);
    expect(detail.crashes[0]).toMatchObject({
      isFatal: true,
      message: 'TypeError: undefined is not a function',
      groupStatus: 'open',
    });
    expect((await get(`${base}/sessions/${crypto.randomUUID()}`, a.headers)).statusCode).toBe(404);

    // crash group: the workflow of src/domain/crashGroupStatus.ts
    const groups = (await get(`${base}/crash-groups`, a.headers)).json();
    expect(groups.total).toBe(1);
    const g = groups.data[0];
    expect(g).toMatchObject({
      status: 'open',
      occurrenceCount: 1,
      affectedDevices: 1,
      appVersions: ['1.4.0'],
      allowedTransitions: ['acknowledged', 'resolved', 'ignored'],
    });
    expect(g.id).toBe(detail.crashes[0].groupId);
    const gUrl = `${base}/crash-groups/${g.id}`;
    const setStatus = (status: string) =>
      s.app.inject({ method: 'PATCH', url: gUrl, headers: a.headers, payload: { status } });
    // open → resolved in one step; setting it again is a 200 that changes nothing
    const resolved = await setStatus('resolved');
    expect(resolved.statusCode).toBe(200);
    expect(resolved.json()).toMatchObject({
      status: 'resolved',
      allowedTransitions: ['open', 'acknowledged', 'ignored'],
    });
    expect((await setStatus('resolved')).json().status).toBe('resolved');
    expect((await get(gUrl, a.headers)).json().status).toBe('resolved');
    expect((await get(`${base}/crash-groups?status=resolved`, a.headers)).json().total).toBe(1);
    expect((await get(`${base}/crash-groups?status=open`, a.headers)).json().total).toBe(0);
    expect((await setStatus('bogus')).statusCode).toBe(422);

    const chart = (await get(`${base}/daily?from=2026-01-01&to=2026-01-04`, a.headers)).json().data;
    expect(chart).toEqual([
      { day: '2026-01-01', sessions: 1, crashFree: 1 },
      { day: '2026-01-02', sessions: 1, crashFree: 1 },
      { day: '2026-01-03', sessions: 1, crashFree: 0 },
      { day: '2026-01-04', sessions: 0, crashFree: 0 },
    ]);
  });
});

describe('web', () => {
  it('serves the dashboard at / with a restrictive CSP, and its assets', async () => {
    const r = await s.app.inject({ method: 'GET', url: '/' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toContain('text/html');
    expect(r.headers['content-security-policy']).toContain("script-src 'self'");
    expect(r.body).toContain('<script type="module" src="/app.js"></script>');
    const js = await s.app.inject({ method: 'GET', url: '/app.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toContain('text/javascript');
    const cached = await s.app.inject({
      method: 'GET',
      url: '/app.js',
      headers: { 'if-none-match': String(js.headers.etag) },
    });
    expect(cached.statusCode).toBe(304);
    expect((await s.app.inject({ method: 'GET', url: '/../package.json' })).statusCode).toBe(404);
  });

  it('documents the auth, dashboard and operator routes in the OpenAPI document', async () => {
    const doc = (await s.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const p of [
      '/api/auth/login',
      '/api/dashboard/projects/{projectId}/sessions',
      '/api/users/{userId}/suspend',
    ]) {
      expect(Object.keys(doc.paths)).toContain(p);
    }
  });
});
