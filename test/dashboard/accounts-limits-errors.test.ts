import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logCapture, startTestServer, tempDataDir, type TestServer } from '../helpers/server.ts';
import { dashboardProject, signup } from '../helpers/accounts.ts';
import { passwordProblem } from '../../src/domain/passwordPolicy.ts';

// Findings 5 and 7 of the security probe: the dashboard's routes and accounts.
const { lines: logLines, stream } = logCapture();

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(
    { LOG_LEVEL: 'info', RATE_LIMIT_DASHBOARD_PER_MIN: '40', RATE_LIMIT_AUTH_PER_MIN: '1000' },
    tempDataDir(),
    { logger: { stream } },
  );
});
afterAll(async () => {
  await s?.close();
});

const signupWith = (password: string) =>
  s.app.inject({
    method: 'POST',
    url: '/api/auth/signup',
    payload: { email: `p-${crypto.randomUUID()}@example.com`, password },
  });

describe('password policy', () => {
  it('refuses all-whitespace, short, repetitive and common passwords with 422 on /password', async () => {
    for (const pw of [
      ' '.repeat(10),
      '1234567890',
      'qwertyuiop',
      'Password123',
      'aaaaaaaaaaaa',
      'abababababab',
      'short',
    ]) {
      const r = await signupWith(pw);
      expect(r.statusCode, JSON.stringify(pw)).toBe(422);
      expect(r.json().details[0].path).toBe('/password');
    }
    expect((await signupWith('plum kettle orbit 7')).statusCode).toBe(201);
  });

  it('the rule on its own', () => {
    const common = new Set(['letmein123']);
    expect(passwordProblem('LetMeIn123', common)).toMatch(/common/);
    expect(passwordProblem('\t \t \t \t \t ', common)).toMatch(/whitespace/);
    expect(passwordProblem('ééééééééé', common)).toMatch(/at least 10/);
    expect(passwordProblem('grüne Äpfel 9', common)).toBeNull();
  });
});

describe('dashboard parameters and limits', () => {
  it('page and limit out of bounds are 400, never a 500; no SQL parameter reaches the log', async () => {
    const a = await signup(s);
    const p = await dashboardProject(s, a);
    const base = `/api/dashboard/projects/${p.projectId}`;
    for (const q of ['page=1e300', 'page=0', 'page=-1', 'limit=1e300', 'page=abc', 'page=1.5']) {
      for (const path of ['/sessions', '/crash-groups']) {
        const r = await s.app.inject({ method: 'GET', url: `${base}${path}?${q}`, headers: a.headers });
        expect(r.statusCode, `${path}?${q}`).toBe(400);
      }
    }
    const ev = await s.app.inject({
      method: 'GET',
      url: `${base}/sessions/${crypto.randomUUID()}/events?after=1e300`,
      headers: a.headers,
    });
    expect(ev.statusCode).toBe(400);
    expect(logLines.join('')).not.toMatch(/"params"|"parameters"|1e\+300/);
  });

  it('rate-limits each signed-in user (429 with Retry-After)', async () => {
    const a = await signup(s);
    const codes: number[] = [];
    let last: LightMyRequestResponse | undefined;
    for (let i = 0; i < 45; i++) {
      last = await s.app.inject({ method: 'GET', url: '/api/dashboard/projects', headers: a.headers });
      codes.push(last.statusCode);
    }
    expect(codes.filter((c) => c === 200).length).toBe(40);
    expect(last!.statusCode).toBe(429);
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    // another user has their own budget
    const b = await signup(s);
    expect((await s.app.inject({ method: 'GET', url: '/api/dashboard/projects', headers: b.headers })).statusCode).toBe(
      200,
    );
  });
});

describe('request log lines (LOG_REQUESTS unset)', () => {
  it('a successful request writes no line; a 5xx writes one, with its status', async () => {
    const a = await signup(s);
    const p = await dashboardProject(s, a);
    const from = logLines.length;
    expect((await s.app.inject({ method: 'GET', url: '/api/dashboard/projects', headers: a.headers })).statusCode).toBe(
      200,
    );
    const ch = s.svc.stores.ch;
    const real = ch.query.bind(ch);
    ch.query = (async () => {
      throw new Error('ClickHouse is away');
    }) as typeof ch.query;
    try {
      expect((await s.app.inject({ method: 'GET', url: '/export/network', headers: p.auth })).statusCode).toBe(500);
    } finally {
      ch.query = real;
    }
    const lines = logLines
      .slice(from)
      .map((l) => JSON.parse(l) as { msg: string; req?: { url: string }; res?: { statusCode: number } });
    expect(lines.filter((l) => l.msg === 'incoming request')).toEqual([]);
    expect(lines.filter((l) => l.msg === 'request completed').map((l) => [l.req?.url, l.res?.statusCode])).toEqual([
      ['/export/network', 500],
    ]);
  });
});

describe('error replies', () => {
  it('carry a code the dashboard words them from (web/lib/messages.js), not their English', async () => {
    const { humanError } = (await import('../../web/lib/messages.js' as string)) as {
      humanError: (status: number, body: unknown) => string;
    };
    const a = await signup(s);
    const p = await dashboardProject(s, a);
    const seen = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const r = await s.app.inject({ method, url, headers: a.headers, payload });
      return { status: r.statusCode, body: r.json(), words: humanError(r.statusCode, r.json()) };
    };
    const base = `/api/dashboard/projects/${p.projectId}`;

    const email = await seen('POST', '/api/auth/signup', { email: 'not-an-address', password: 'plum kettle orbit 7' });
    expect(email.body).toMatchObject({
      code: 'validation_failed',
      details: [{ path: '/email', keyword: 'format', params: { format: 'email' } }],
    });
    expect(email.words).toBe('The email address is not a valid email address.');
    const missing = await seen('POST', '/api/auth/signup', { email: 'x@example.com' });
    expect(missing.body).toMatchObject({ code: 'missing_field', field: '/password' });
    expect(missing.words).toBe('The password is required.');
    const link = await seen('GET', '/api/dashboard/projects/not-a-uuid/sessions');
    expect(link.body).toMatchObject({ code: 'invalid_path_parameter', field: 'projectId', keyword: 'format' });
    expect(link.words).toMatch(/^This link is broken: the project id in it is not valid/);
    const page = await seen('GET', `${base}/sessions?page=0`);
    expect(page.body).toMatchObject({
      code: 'invalid_parameter',
      field: 'page',
      keyword: 'minimum',
      params: { limit: 1 },
    });
    expect(page.words).toBe('The page must be 1 or more.');
    const date = await seen('GET', `${base}/sessions?from=2026-02-30`);
    expect(date.body).toMatchObject({ code: 'invalid_date', field: 'from' });
    expect(date.words).toMatch(/^The start date is not a date/);
    const foreign = await seen('GET', `/api/dashboard/projects/${crypto.randomUUID()}/sessions`);
    expect(foreign.body).toEqual({ error: 'Project not found', code: 'project_not_found' });
    expect(foreign.words).toMatch(/^This project does not exist/);
  });
});

describe('team invitations', () => {
  it('an invited person joins only by accepting, can decline, and can leave; the owner cannot leave', async () => {
    const owner = await signup(s);
    const p = await dashboardProject(s, owner);
    const invitee = await signup(s);
    const other = await signup(s);
    const sessions = (who: typeof owner) =>
      s.app.inject({ method: 'GET', url: `/api/dashboard/projects/${p.projectId}/sessions`, headers: who.headers });

    // An address with no account is invited just the same: inviting tells nothing about accounts.
    const ghost = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/teams/${owner.teamId}/members`,
      headers: owner.headers,
      payload: { email: 'nobody-here@example.com' },
    });
    expect(ghost.statusCode).toBe(201);

    const inv = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/teams/${owner.teamId}/members`,
      headers: owner.headers,
      payload: { email: invitee.email.toUpperCase() },
    });
    expect(inv.statusCode).toBe(201);
    const invitationId = inv.json().invitation.id;
    expect(inv.json().data.map((m: { email: string }) => m.email)).not.toContain(invitee.email);
    expect((await sessions(invitee)).statusCode).toBe(404); // pending: not a member
    const teams = (await s.app.inject({ method: 'GET', url: '/api/dashboard/teams', headers: owner.headers })).json()
      .data;
    expect(teams[0].invitations.map((i: { email: string }) => i.email)).toContain(invitee.email);

    const mine = (
      await s.app.inject({ method: 'GET', url: '/api/dashboard/invitations', headers: invitee.headers })
    ).json().data;
    expect(mine).toEqual([expect.objectContaining({ id: invitationId, teamId: owner.teamId, invitedBy: owner.email })]);
    // Someone else cannot answer it.
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: `/api/dashboard/invitations/${invitationId}/accept`,
          headers: other.headers,
        })
      ).statusCode,
    ).toBe(404);

    const accept = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/invitations/${invitationId}/accept`,
      headers: invitee.headers,
    });
    expect(accept.statusCode).toBe(200);
    expect((await sessions(invitee)).statusCode).toBe(200);
    expect(
      (await s.app.inject({ method: 'GET', url: '/api/dashboard/invitations', headers: invitee.headers })).json().data,
    ).toEqual([]);

    const leave = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/teams/${owner.teamId}/leave`,
      headers: invitee.headers,
    });
    expect(leave.statusCode).toBe(200);
    expect((await sessions(invitee)).statusCode).toBe(404);
    const ownerLeaves = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/teams/${owner.teamId}/leave`,
      headers: owner.headers,
    });
    expect(ownerLeaves.statusCode).toBe(409);

    const inv2 = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/teams/${owner.teamId}/members`,
      headers: owner.headers,
      payload: { email: other.email },
    });
    const decline = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/invitations/${inv2.json().invitation.id}/decline`,
      headers: other.headers,
    });
    expect(decline.statusCode).toBe(200);
    expect((await sessions(other)).statusCode).toBe(404);
  });
});
