import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addMember, dashboardProject, signup, type Account } from '../helpers/accounts.ts';
import { sessionStart } from '../helpers/payloads.ts';

// Finding 5 of the third probe: a removed member's keys kept working and they stayed on the
// alert lists. Keys now record who made them; the owner decides, at removal, whether those
// keys are revoked or become the owner's; the member leaves every alert list of the team.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ RATE_LIMIT_AUTH_PER_MIN: '1000' });
});
afterAll(async () => {
  await s?.close();
});

const projectsOf = async (a: Account) =>
  (await s.app.inject({ method: 'GET', url: '/api/dashboard/projects', headers: a.headers })).json().data;
async function memberKey(member: Account, projectId: string) {
  const r = await s.app.inject({
    method: 'POST',
    url: `/api/dashboard/projects/${projectId}/keys`,
    headers: member.headers,
    payload: { name: 'member key', scopes: ['ingest'] },
  });
  expect(r.statusCode).toBe(201);
  return { id: r.json().key.id as string, auth: { authorization: `Bearer ${r.json().apiKey}` } };
}
const ingestStatus = async (auth: { authorization: string }) =>
  (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: sessionStart() })).statusCode;

describe('removing a member', () => {
  it('the key list shows who made each key and its scopes', async () => {
    const owner = await signup(s);
    const member = await signup(s);
    await addMember(s, owner, member);
    const p = await dashboardProject(s, owner);
    const k = await memberKey(member, p.projectId);
    const keys = (await projectsOf(owner)).find((x: { id: string }) => x.id === p.projectId).keys;
    expect(keys.find((x: { id: string }) => x.id === k.id)).toMatchObject({
      createdBy: member.userId,
      createdByEmail: member.email,
      scopes: ['ingest'],
    });
    expect(
      keys.find((x: { id: string; name: string | null }) => x.id !== k.id && x.name !== 'App (ingest only)'),
    ).toMatchObject({ createdByEmail: owner.email, scopes: ['ingest', 'export'] });
    // the app key of the setup snippet, made with the project
    expect(keys.find((x: { name: string | null }) => x.name === 'App (ingest only)')).toMatchObject({
      createdByEmail: owner.email,
      scopes: ['ingest'],
    });
  });

  it("revoke: the member's keys answer 401 at once, the owner's keep working, and the member leaves the alert lists", async () => {
    const owner = await signup(s);
    const member = await signup(s);
    await addMember(s, owner, member);
    const p = await dashboardProject(s, owner);
    const k = await memberKey(member, p.projectId);
    expect(await ingestStatus(k.auth)).toBe(201);
    const patch = await s.app.inject({
      method: 'PATCH',
      url: `/api/dashboard/projects/${p.projectId}`,
      headers: owner.headers,
      payload: { alertEmails: [owner.email, member.email] },
    });
    expect(patch.json().alertRecipients).toHaveLength(2);

    const r = await s.app.inject({
      method: 'DELETE',
      url: `/api/dashboard/teams/${owner.teamId}/members/${member.userId}?keys=revoke`,
      headers: owner.headers,
    });
    expect(r.statusCode).toBe(200);
    expect(r.json().keysRevoked).toBe(1);
    expect(r.json().data.map((m: { email: string }) => m.email)).toEqual([owner.email]);
    expect(await ingestStatus(k.auth)).toBe(401);
    expect(await ingestStatus(p.auth)).toBe(201);
    const project = (await projectsOf(owner)).find((x: { id: string }) => x.id === p.projectId);
    expect(project.alertEmails).toEqual([owner.email]);
    expect(project.alertRecipients).toEqual([{ email: owner.email, confirmed: true }]);
  });

  it("reassign: the member's keys keep working, now under the owner's name", async () => {
    const owner = await signup(s);
    const member = await signup(s);
    await addMember(s, owner, member);
    const p = await dashboardProject(s, owner);
    const k = await memberKey(member, p.projectId);
    const r = await s.app.inject({
      method: 'DELETE',
      url: `/api/dashboard/teams/${owner.teamId}/members/${member.userId}?keys=reassign`,
      headers: owner.headers,
    });
    expect(r.statusCode).toBe(200);
    expect(r.json().keysRevoked).toBe(0);
    expect(await ingestStatus(k.auth)).toBe(201);
    const keys = (await projectsOf(owner)).find((x: { id: string }) => x.id === p.projectId).keys;
    expect(keys.find((x: { id: string }) => x.id === k.id)).toMatchObject({
      createdBy: owner.userId,
      createdByEmail: owner.email,
    });
    // The removed member sees nothing of the team any more.
    expect((await projectsOf(member)).find((x: { id: string }) => x.id === p.projectId)).toBeUndefined();
    expect(
      (
        await s.app.inject({
          method: 'DELETE',
          url: `/api/dashboard/teams/${owner.teamId}/members/${member.userId}?keys=bogus`,
          headers: owner.headers,
        })
      ).statusCode,
    ).toBe(400);
  });
});
