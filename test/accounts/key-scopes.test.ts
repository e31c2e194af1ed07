import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { dashboardProject, signup } from '../helpers/accounts.ts';
import { sessionStart } from '../helpers/payloads.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const bearer = (k: string) => ({ authorization: `Bearer ${k}` });

describe('key scopes', () => {
  it('an ingest-only key ingests but gets 403 on every export; the project key does both', async () => {
    const p = await s.createProject();
    const made = await s.app.inject({
      method: 'POST',
      url: `/api/projects/${p.projectId}/keys`,
      headers: s.admin,
      payload: { scopes: ['ingest'] },
    });
    expect(made.statusCode).toBe(201);
    expect(made.json().key.scopes).toEqual(['ingest']);
    const ingestOnly = bearer(made.json().apiKey);

    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: ingestOnly, payload: sessionStart() }))
        .statusCode,
    ).toBe(201);
    for (const path of [
      '/export/sessions',
      '/export/crashes',
      '/export/network',
      `/export/events?sessionId=${sessionStart().sessionId}`,
    ]) {
      const r = await s.app.inject({ method: 'GET', url: path, headers: ingestOnly });
      expect(r.statusCode, path).toBe(403);
      expect(r.json().error).toMatch(/may not export/);
    }
    expect((await s.app.inject({ method: 'GET', url: '/export/sessions', headers: p.auth })).statusCode).toBe(200);

    const exportOnly = await s.app.inject({
      method: 'POST',
      url: `/api/projects/${p.projectId}/keys`,
      headers: s.admin,
      payload: { scopes: ['export'] },
    });
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: bearer(exportOnly.json().apiKey),
      payload: sessionStart(),
    });
    expect(r.statusCode).toBe(403);

    // No body: both scopes, as before.
    const both = await s.app.inject({ method: 'POST', url: `/api/projects/${p.projectId}/keys`, headers: s.admin });
    expect(both.statusCode).toBe(201);
    expect(both.json().key.scopes).toEqual(['ingest', 'export']);
    const bad = await s.app.inject({
      method: 'POST',
      url: `/api/projects/${p.projectId}/keys`,
      headers: s.admin,
      payload: { scopes: ['admin'] },
    });
    expect(bad.statusCode).toBe(422);
  });

  it('the dashboard creates scoped keys and lists their scopes', async () => {
    const a = await signup(s);
    const p = await dashboardProject(s, a);
    const r = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/projects/${p.projectId}/keys`,
      headers: a.headers,
      payload: { scopes: ['ingest'] },
    });
    expect(r.statusCode).toBe(201);
    expect(r.json().key.scopes).toEqual(['ingest']);
    const list = await s.app.inject({ method: 'GET', url: '/api/dashboard/projects', headers: a.headers });
    const keys = list.json().data[0].keys as { id: string; scopes: string[] }[];
    expect(keys.find((k) => k.id === r.json().key.id)!.scopes).toEqual(['ingest']);
    expect(
      (await s.app.inject({ method: 'GET', url: '/export/sessions', headers: bearer(r.json().apiKey) })).statusCode,
    ).toBe(403);
  });

  it('a key created while the owner is suspended stays off until the suspension is lifted (admin API and dashboard)', async () => {
    const a = await signup(s);
    const p = await dashboardProject(s, a);
    const suspend = await s.app.inject({ method: 'POST', url: `/api/users/${a.userId}/suspend`, headers: s.admin });
    expect(suspend.statusCode).toBe(200);
    const made = await s.app.inject({ method: 'POST', url: `/api/projects/${p.projectId}/keys`, headers: s.admin });
    expect(made.statusCode).toBe(201);
    expect(made.json().key.active).toBe(false);
    const key = bearer(made.json().apiKey);
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: key, payload: sessionStart() }))
        .statusCode,
    ).toBe(401);
    // The dashboard refuses outright (the owner cannot sign in; a member is told why).
    await s.app.inject({ method: 'POST', url: `/api/users/${a.userId}/unsuspend`, headers: s.admin });
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: key, payload: sessionStart() }))
        .statusCode,
    ).toBe(201);
  });
});
