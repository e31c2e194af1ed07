import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { PASSWORD, addMember, dashboardProject, signup } from '../helpers/accounts.ts';
import { sessionStart } from '../helpers/payloads.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ RATE_LIMIT_AUTH_PER_MIN: '1000' });
});
afterAll(async () => {
  await s?.close();
});

const ingestStatus = async (auth: { authorization: string }) =>
  (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: sessionStart() })).statusCode;
const loginStatus = async (email: string) =>
  (await s.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: PASSWORD } })).statusCode;

describe('suspension, end to end', () => {
  it("turns off the owner's team keys and log-in; lifting it restores both, but not a key turned off by hand", async () => {
    const owner = await signup(s);
    const member = await signup(s);
    await addMember(s, owner, member);
    const p1 = await dashboardProject(s, owner, 'one');
    const p2 = await dashboardProject(s, owner, 'two');
    const manual = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/projects/${p1.projectId}/keys`,
      headers: owner.headers,
    });
    const manualAuth = { authorization: `Bearer ${manual.json().apiKey}` };
    await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/projects/${p1.projectId}/keys/${manual.json().key.id}/deactivate`,
      headers: owner.headers,
    });
    const elsewhere = await dashboardProject(s, member, 'member own');

    // the keys work, and are in the key cache now
    expect(await ingestStatus(p1.auth)).toBe(201);
    expect(await ingestStatus(p2.auth)).toBe(201);
    expect(await ingestStatus(manualAuth)).toBe(401);

    const noToken = await s.app.inject({ method: 'POST', url: `/api/users/${owner.userId}/suspend` });
    expect(noToken.statusCode).toBe(401);
    const sus = await s.app.inject({ method: 'POST', url: `/api/users/${owner.userId}/suspend`, headers: s.admin });
    expect(sus.statusCode).toBe(200);
    // each project's first key and its app key (the setup snippet's)
    expect(sus.json()).toMatchObject({ ok: true, keysDeactivated: 4 });
    expect(sus.json().user.suspendedAt).not.toBeNull();

    // at once, not only after the cache TTL
    expect(await ingestStatus(p1.auth)).toBe(401);
    expect(await ingestStatus(p2.auth)).toBe(401);
    expect(await loginStatus(owner.email)).toBe(403);
    // the owner's open sessions are ended too
    expect(
      (await s.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: owner.cookie } })).statusCode,
    ).toBe(401);
    // a member still signs in, sees the keys off, and cannot mint new ones
    expect(await loginStatus(member.email)).toBe(200);
    const keys = (await s.app.inject({ method: 'GET', url: '/api/dashboard/projects', headers: member.headers }))
      .json()
      .data.find((p: { id: string }) => p.id === p1.projectId).keys;
    expect(keys.every((k: { active: boolean }) => !k.active)).toBe(true);
    expect(keys.filter((k: { suspended: boolean }) => k.suspended)).toHaveLength(2);
    const mint = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/projects/${p1.projectId}/keys`,
      headers: member.headers,
    });
    expect(mint.statusCode).toBe(403);
    // the member's own team is not affected
    expect(await ingestStatus(elsewhere.auth)).toBe(201);

    const lift = await s.app.inject({ method: 'POST', url: `/api/users/${owner.userId}/unsuspend`, headers: s.admin });
    expect(lift.statusCode).toBe(200);
    expect(lift.json()).toMatchObject({ ok: true, keysReactivated: 4, user: { suspendedAt: null } });
    expect(await ingestStatus(p1.auth)).toBe(201);
    expect(await ingestStatus(p2.auth)).toBe(201);
    expect(await ingestStatus(manualAuth)).toBe(401);
    expect(await loginStatus(owner.email)).toBe(200);

    expect(
      (await s.app.inject({ method: 'POST', url: `/api/users/${crypto.randomUUID()}/suspend`, headers: s.admin }))
        .statusCode,
    ).toBe(404);
    const found = await s.app.inject({
      method: 'GET',
      url: `/api/users?email=${encodeURIComponent(owner.email.toUpperCase())}`,
      headers: s.admin,
    });
    expect(found.json().data.map((u: { id: string }) => u.id)).toEqual([owner.userId]);
  });

  it('suspending a member blocks their log-in only', async () => {
    const owner = await signup(s);
    const member = await signup(s);
    await addMember(s, owner, member);
    const p = await dashboardProject(s, owner);
    const r = await s.app.inject({ method: 'POST', url: `/api/users/${member.userId}/suspend`, headers: s.admin });
    expect(r.json().keysDeactivated).toBe(0);
    expect(await loginStatus(member.email)).toBe(403);
    expect(await ingestStatus(p.auth)).toBe(201);
  });
});
