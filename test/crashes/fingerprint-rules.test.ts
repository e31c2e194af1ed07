import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { dashboardProject, signup } from '../helpers/accounts.ts';
import { MAX_RULES_PER_PROJECT } from '../../src/domain/fingerprintRules.ts';
import { crash, sessionStart, T0 } from '../helpers/payloads.ts';

// A project's fingerprint rules over HTTP and the real stores: the management API (ADMIN_TOKEN)
// and the dashboard (a team member's session) share one service.

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  s.app.inject({
    method,
    url: `/api${url}`,
    headers: s.admin,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

describe('fingerprint rules in the management API', () => {
  it("creates, lists in order, reads, edits, moves and deletes a project's rules", async () => {
    const p = await s.createProject();
    const base = `/projects/${p.projectId}/fingerprint-rules`;
    expect((await api('GET', base)).json()).toEqual({ items: [] });

    const a = await api('POST', base, { match: { type: 'ChunkLoadError' }, fingerprint: ['chunk-load'] });
    expect(a.statusCode).toBe(201);
    const ruleA = a.json();
    expect(ruleA).toMatchObject({
      projectId: p.projectId,
      position: 0,
      match: { type: 'ChunkLoadError' },
      fingerprint: ['chunk-load'],
    });
    const b = (
      await api('POST', base, {
        match: { message: 'JSON.parse*', function: 'loadCart' },
        fingerprint: ['{{default}}', 'json'],
      })
    ).json();
    // placed first: read before the others
    const c = (
      await api('POST', base, { match: { module: 'com.example.*' }, fingerprint: ['example'], position: 0 })
    ).json();
    expect(
      (await api('GET', base)).json().items.map((r: { id: string; position: number }) => [r.id, r.position]),
    ).toEqual([
      [c.id, 0],
      [ruleA.id, 1],
      [b.id, 2],
    ]);

    const listed = (await api('GET', base)).json().items as { id: string }[];
    expect((await api('GET', `${base}/${b.id}`)).json()).toEqual(listed.find((r) => r.id === b.id));
    const edited = await api('PATCH', `${base}/${b.id}`, { fingerprint: ['json-parse'], position: 0 });
    expect(edited.statusCode).toBe(200);
    expect(edited.json()).toMatchObject({
      id: b.id,
      position: 0,
      match: { message: 'JSON.parse*', function: 'loadCart' },
      fingerprint: ['json-parse'],
    });
    expect((await api('GET', base)).json().items.map((r: { id: string }) => r.id)).toEqual([b.id, c.id, ruleA.id]);

    expect((await api('DELETE', `${base}/${c.id}`)).statusCode).toBe(204);
    expect(
      (await api('GET', base)).json().items.map((r: { id: string; position: number }) => [r.id, r.position]),
    ).toEqual([
      [b.id, 0],
      [ruleA.id, 1],
    ]);
    expect((await api('DELETE', `${base}/${c.id}`)).statusCode).toBe(404);
    expect((await api('GET', `${base}/${c.id}`)).statusCode).toBe(404);
  });

  it('answers bad input with 422 and its details, and changes nothing', async () => {
    const p = await s.createProject();
    const base = `/projects/${p.projectId}/fingerprint-rules`;
    const bad: [unknown, string][] = [
      [{ match: {}, fingerprint: ['x'] }, '/match'],
      [{ match: { type: 'X' }, fingerprint: [] }, '/fingerprint'],
      [{ match: { type: 'X' }, fingerprint: ['x'.repeat(201)] }, '/fingerprint/0'],
      [{ match: { stack: 'X' }, fingerprint: ['x'] }, '/match'],
      [{ match: { type: '' }, fingerprint: ['x'] }, '/match/type'],
      [{ match: { type: 'x'.repeat(201) }, fingerprint: ['x'] }, '/match/type'],
      [{ match: { type: 'X' }, fingerprint: ['x'], position: -1 }, '/position'],
    ];
    for (const [body, path] of bad) {
      const r = await api('POST', base, body);
      expect(r.statusCode, JSON.stringify(body)).toBe(422);
      expect(
        r.json().details.map((d: { path: string }) => d.path),
        JSON.stringify(body),
      ).toContain(path);
    }
    // a missing field is a 400, as everywhere in the API
    expect((await api('POST', base, { match: { type: 'X' } })).statusCode).toBe(400);
    const ok = (await api('POST', base, { match: { type: 'X' }, fingerprint: ['x'] })).json();
    expect((await api('PATCH', `${base}/${ok.id}`, {})).statusCode).toBe(422);
    expect((await api('PATCH', `${base}/${ok.id}`, { match: {} })).statusCode).toBe(422);
    expect((await api('GET', base)).json().items).toEqual([ok]);
    expect((await api('GET', `/projects/${randomUUID()}/fingerprint-rules`)).statusCode).toBe(404);
    expect(
      (await api('POST', `/projects/${randomUUID()}/fingerprint-rules`, { match: { type: 'X' }, fingerprint: ['x'] }))
        .statusCode,
    ).toBe(404);
    expect((await s.app.inject({ method: 'GET', url: `/api${base}` })).statusCode).toBe(401);
  });

  it(`holds at most ${MAX_RULES_PER_PROJECT} rules per project, even when created at once`, async () => {
    const p = await s.createProject();
    const base = `/projects/${p.projectId}/fingerprint-rules`;
    const all = await Promise.all(
      Array.from({ length: MAX_RULES_PER_PROJECT + 5 }, (_, i) =>
        api('POST', base, { match: { type: `E${i}` }, fingerprint: [`f${i}`] }),
      ),
    );
    expect(all.filter((r) => r.statusCode === 201)).toHaveLength(MAX_RULES_PER_PROJECT);
    const refused = all.filter((r) => r.statusCode !== 201);
    expect(refused.map((r) => r.statusCode)).toEqual(Array(5).fill(422));
    const items = (await api('GET', base)).json().items as { position: number }[];
    expect(items.map((r) => r.position)).toEqual([...Array(MAX_RULES_PER_PROJECT).keys()]);
  });
});

describe('fingerprint rules on the crash path', () => {
  it('groups the crashes a rule matches as one, whatever their messages and stacks, and leaves the others alone', async () => {
    const p = await s.createProject();
    const st = sessionStart();
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st })).statusCode,
    ).toBe(201);
    let ts = T0 + 1000;
    const report = async (message: string, stackTrace: string) => {
      const r = await s.app.inject({
        method: 'POST',
        url: '/ingest/crash',
        headers: p.auth,
        payload: crash(st.sessionId, { message, stackTrace, timestamp: ts++ }),
      });
      expect(r.statusCode).toBe(201);
    };
    const groups = async () =>
      (
        await (
          await s.stores()
        ).pg.query<{ message: string }>(
          'SELECT message FROM crash_groups WHERE project_id = $1 AND merged_into IS NULL ORDER BY first_seen_at',
          [p.projectId],
        )
      ).rows.map((r) => r.message);

    const rule = await api('POST', `/projects/${p.projectId}/fingerprint-rules`, {
      match: { type: 'TypeError', message: "Cannot read properties of * (reading 'total')", function: 'renderCart' },
      fingerprint: ['cart-total'],
    });
    expect(rule.statusCode).toBe(201);
    await report(
      "TypeError: Cannot read properties of undefined (reading 'total')",
      "TypeError: Cannot read properties of undefined (reading 'total')\n    at renderCart (https://shop.example/assets/cart-1a2b3c.js:10:5)",
    );
    await report(
      "TypeError: Cannot read properties of null (reading 'total')",
      "TypeError: Cannot read properties of null (reading 'total')\n    at Cart.render (https://cdn.example/x.js:1:1)\n    at renderCart (https://cdn.example/assets/cart-9f8e7d.js:12:9)",
    );
    // the same message from another function: not the rule's
    await report(
      "TypeError: Cannot read properties of null (reading 'total')",
      "TypeError: Cannot read properties of null (reading 'total')\n    at renderOrders (https://shop.example/assets/orders.js:4:4)",
    );
    expect(await groups()).toEqual([
      "TypeError: Cannot read properties of undefined (reading 'total')",
      "TypeError: Cannot read properties of null (reading 'total')",
    ]);

    // a Firefox stack carries no message line: the report's message is read
    await report(
      "TypeError: Cannot read properties of undefined (reading 'total')",
      'renderCart@https://shop.example/assets/cart.js:10:5',
    );
    expect(await groups()).toHaveLength(2);

    // deleting the rule: the next such crash is grouped by its stack again
    expect((await api('DELETE', `/projects/${p.projectId}/fingerprint-rules/${rule.json().id}`)).statusCode).toBe(204);
    await report(
      "TypeError: Cannot read properties of undefined (reading 'total')",
      "TypeError: Cannot read properties of undefined (reading 'total')\n    at renderCart (https://shop.example/assets/cart-1a2b3c.js:10:5)",
    );
    expect(await groups()).toHaveLength(3);
  });
});

describe('fingerprint rules in the dashboard', () => {
  it("lets the members of the project's team manage them, and no one else", async () => {
    const alice = await signup(s);
    const mallory = await signup(s);
    const { projectId } = await dashboardProject(s, alice);
    const url = `/api/dashboard/projects/${projectId}/fingerprint-rules`;
    const created = await s.app.inject({
      method: 'POST',
      url,
      headers: alice.headers,
      payload: { match: { type: 'ChunkLoadError' }, fingerprint: ['chunk'] },
    });
    expect(created.statusCode).toBe(201);
    expect((await s.app.inject({ method: 'GET', url, headers: alice.headers })).json().items).toEqual([created.json()]);
    // the management API sees the same rule
    expect((await api('GET', `/projects/${projectId}/fingerprint-rules`)).json().items).toEqual([created.json()]);
    expect((await s.app.inject({ method: 'GET', url, headers: mallory.headers })).statusCode).toBe(404);
    const theft = await s.app.inject({
      method: 'DELETE',
      url: `${url}/${created.json().id}`,
      headers: mallory.headers,
    });
    expect(theft.statusCode).toBe(404);
    // without the CSRF token a write is refused
    const noCsrf = await s.app.inject({
      method: 'POST',
      url,
      headers: { cookie: alice.cookie },
      payload: { match: { type: 'X' }, fingerprint: ['x'] },
    });
    expect(noCsrf.statusCode).toBe(403);
    expect((await s.app.inject({ method: 'GET', url, headers: alice.headers })).json().items).toHaveLength(1);
  });
});
