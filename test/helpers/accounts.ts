import { randomUUID } from 'node:crypto';
import type { TestServer } from './server.ts';

export const PASSWORD = 'correct horse battery';

/** A signed-in browser-like client: its session cookie and CSRF token. */
export interface Account {
  email: string;
  userId: string;
  teamId: string;
  cookie: string;
  csrf: string;
  /** Cookie and CSRF headers for a dashboard request. */
  headers: Record<string, string>;
}

export function cookieFrom(setCookie: string | string[] | undefined): string {
  const first = Array.isArray(setCookie) ? setCookie[0] : setCookie;
  if (!first) throw new Error('no Set-Cookie');
  return first.split(';')[0]!;
}

export async function signup(s: TestServer, email = `u-${randomUUID()}@example.com`, password = PASSWORD): Promise<Account> {
  const r = await s.app.inject({ method: 'POST', url: '/api/auth/signup', payload: { email, password } });
  if (r.statusCode !== 201) throw new Error(`signup failed: ${r.statusCode} ${r.body}`);
  const body = r.json();
  const cookie = cookieFrom(r.headers['set-cookie']);
  return {
    email, userId: body.user.id, teamId: body.teams[0].id, cookie, csrf: body.csrfToken,
    headers: { cookie, 'x-csrf-token': body.csrfToken },
  };
}

/** Creates a project through the dashboard; returns its id and the key shown once. */
export async function dashboardProject(s: TestServer, a: Account, name = 'My app') {
  const r = await s.app.inject({ method: 'POST', url: '/api/dashboard/projects', headers: a.headers, payload: { name } });
  if (r.statusCode !== 201) throw new Error(`project failed: ${r.statusCode} ${r.body}`);
  const body = r.json();
  return { projectId: body.project.id as string, apiKey: body.apiKey as string, auth: { authorization: `Bearer ${body.apiKey}` } };
}

/** The owner invites the member into their team and the member accepts. */
export async function addMember(s: TestServer, owner: Account, member: Account, teamId = owner.teamId) {
  const inv = await s.app.inject({ method: 'POST', url: `/api/dashboard/teams/${teamId}/members`, headers: owner.headers, payload: { email: member.email } });
  if (inv.statusCode !== 201) throw new Error(`invite failed: ${inv.statusCode} ${inv.body}`);
  const ok = await s.app.inject({ method: 'POST', url: `/api/dashboard/invitations/${inv.json().invitation.id}/accept`, headers: member.headers });
  if (ok.statusCode !== 200) throw new Error(`accept failed: ${ok.statusCode} ${ok.body}`);
}
