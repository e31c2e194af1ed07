import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addMember, dashboardProject, signup, type Account } from '../helpers/accounts.ts';
import { ROLE_KEY_SCOPES, scopesBeyondRole } from '../../src/domain/apiKey.ts';

// Keys made in the dashboard with scopes, by team role: the owner gives any scope, a member
// ingest and upload (a CI key), never export; the key is in the creation answer only.

let s: TestServer;
let owner: Account;
let member: Account;
let projectId = '';

beforeAll(async () => {
  s = await startTestServer({ RATE_LIMIT_AUTH_PER_MIN: '1000' });
  owner = await signup(s);
  member = await signup(s);
  await addMember(s, owner, member);
  projectId = (await dashboardProject(s, owner)).projectId;
});
afterAll(async () => {
  await s?.close();
});

const make = (who: Account, payload: object) =>
  s.app.inject({ method: 'POST', url: `/api/dashboard/projects/${projectId}/keys`, headers: who.headers, payload });

describe('dashboard keys with scopes', () => {
  it('the role decides the scopes: pure rule', () => {
    expect(scopesBeyondRole('owner', ['ingest', 'export', 'upload'])).toEqual([]);
    expect(scopesBeyondRole('member', ['ingest', 'export', 'upload'])).toEqual(['export']);
    expect(ROLE_KEY_SCOPES.member).toEqual(['ingest', 'upload']);
  });

  it('an owner makes an export key and a member a CI upload key, each shown once; a member is refused export', async () => {
    const exp = await make(owner, { name: 'warehouse', scopes: ['export'] });
    expect(exp.statusCode, exp.body).toBe(201);
    expect(exp.json().key.scopes).toEqual(['export']);
    const plaintext = exp.json().apiKey as string;
    // the export key reads the project; it cannot send
    const auth = { authorization: `Bearer ${plaintext}` };
    expect((await s.app.inject({ method: 'GET', url: '/export/sessions', headers: auth })).statusCode).toBe(200);

    const ci = await make(member, { name: 'CI', scopes: ['upload'] });
    expect(ci.statusCode, ci.body).toBe(201);
    expect(ci.json().key).toMatchObject({ name: 'CI', scopes: ['upload'] });
    expect(
      (
        await s.app.inject({
          method: 'GET',
          url: '/export/sessions',
          headers: { authorization: `Bearer ${ci.json().apiKey}` },
        })
      ).statusCode,
    ).toBe(403);

    const refused = await make(member, { name: 'mine', scopes: ['ingest', 'export'] });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toMatch(/owner can make export keys/);
    expect((await make(member, { scopes: [] })).statusCode).toBe(422);
    // no scopes asked: an ingest key, whoever asks
    expect((await make(member, {})).json().key.scopes).toEqual(['ingest']);

    const listed = await s.app.inject({ method: 'GET', url: '/api/dashboard/projects', headers: member.headers });
    const keys = listed.json().data.find((p: { id: string }) => p.id === projectId).keys as {
      name: string;
      scopes: string[];
    }[];
    expect(keys.map((k) => k.name)).toEqual(expect.arrayContaining(['warehouse', 'CI']));
    expect(keys).toHaveLength(5); // the project's first key, its ingest-only app key, export, CI, the default one: the refused one made nothing
    expect(listed.body).not.toContain(plaintext);
    // someone outside the team: no project
    expect((await make(await signup(s), { scopes: ['ingest'] })).statusCode).toBe(404);
  });
});
