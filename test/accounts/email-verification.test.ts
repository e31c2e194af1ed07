import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { parseMail } from '../helpers/smtp.ts';
import { sleep, waitFor } from '../helpers/wait.ts';
import { crash, sessionStart } from '../helpers/payloads.ts';
import { dashboardProject, signup, verificationToken, verifyEmail, type Account } from '../helpers/accounts.ts';

// Finding 1 of the third probe: an invitation matched on an address nobody had proved. Owner
// invites bob@…, an attacker signs up as bob@… and accepts. Now the address must be verified
// (an emailed link, token stored hashed, expiring, confirmed by POST) before it answers an
// invitation, gets team-fallback alerts or counts as a member's own address.
const WINDOW_MS = 1500;
let s: TestServer;
// The worker claims every due job of its database: this file's own (test/setupDatabase.ts).
beforeAll(async () => {
  s = await startTestServer({
    RUN_WORKER: 'true',
    OUTBOX_POLL_MS: '100',
    ALERT_DIGEST_WINDOW_MS: String(WINDOW_MS),
    PUBLIC_URL: 'http://localhost:3000',
    RATE_LIMIT_AUTH_PER_MIN: '1000',
  });
});
afterAll(async () => {
  await s?.close();
});

const mailDir = () => path.join(s.dataDir, 'mail');
function mailsTo(addr: string) {
  if (!fs.existsSync(mailDir())) return [];
  return fs
    .readdirSync(mailDir())
    .filter((f) => f.endsWith('.eml'))
    .sort()
    .map((f) => parseMail(fs.readFileSync(path.join(mailDir(), f), 'utf8')))
    .filter((m) => (m.headers.to ?? '').split(/,\s*/).includes(addr));
}
const email = () => `v-${randomUUID()}@example.com`;
const me = async (a: Account) =>
  (await s.app.inject({ method: 'GET', url: '/api/auth/me', headers: a.headers })).json();
const invite = (owner: Account, to: string) =>
  s.app.inject({
    method: 'POST',
    url: `/api/dashboard/teams/${owner.teamId}/members`,
    headers: owner.headers,
    payload: { email: to },
  });

describe('email verification', () => {
  it("an account made with somebody else's address cannot take their invitation", async () => {
    const owner = await signup(s);
    const bob = email();
    const inv = await invite(owner, bob);
    expect(inv.statusCode).toBe(201);
    const invitationId = inv.json().invitation.id as string;

    // The attacker signs up as bob@… and cannot read bob's mailbox.
    const attacker = await signup(s, bob, undefined, { verified: false });
    expect((await me(attacker)).user.emailVerified).toBe(false);
    const listed = await s.app.inject({ method: 'GET', url: '/api/dashboard/invitations', headers: attacker.headers });
    expect(listed.json()).toEqual({ data: [], emailVerified: false });
    const accept = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/invitations/${invitationId}/accept`,
      headers: attacker.headers,
    });
    expect(accept.statusCode).toBe(403);
    expect(accept.json().error).toMatch(/verify/i);
    const decline = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/invitations/${invitationId}/decline`,
      headers: attacker.headers,
    });
    expect(decline.statusCode).toBe(403);
    // Nothing changed: not a member, the invitation still waits.
    const teams = (await s.app.inject({ method: 'GET', url: '/api/dashboard/teams', headers: owner.headers })).json()
      .data;
    const team = teams.find((t: { id: string }) => t.id === owner.teamId);
    expect(team.members.map((m: { email: string }) => m.email)).toEqual([owner.email]);
    expect(team.invitations.map((i: { id: string }) => i.id)).toEqual([invitationId]);

    // bob's mailbox got the invitation (a link to the Team page) and the verification link.
    const invitationMail = await waitFor('the invitation email', () =>
      mailsTo(bob).find((m) => /invited/.test(m.headers.subject ?? '')),
    );
    expect(invitationMail.body).toContain('http://localhost:3000/#/team');
    expect(invitationMail.body).toContain(owner.email);
    // Whoever reads it (the real bob) verifies, and then accepts.
    await verifyEmail(s, bob);
    expect((await me(attacker)).user.emailVerified).toBe(true);
    const ok = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/invitations/${invitationId}/accept`,
      headers: attacker.headers,
    });
    expect(ok.statusCode).toBe(200);
  });

  it("the link's page changes nothing; its POST verifies once; tokens are stored hashed and expire", async () => {
    const a = await signup(s, email(), undefined, { verified: false });
    const token = await verificationToken(s, a.email);
    const link = `/api/auth/verify?token=${encodeURIComponent(token)}`;
    const page = await s.app.inject({ method: 'GET', url: link });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.body).toContain('<form method="post" action="/api/auth/verify">');
    expect((await s.app.inject({ method: 'HEAD', url: link })).statusCode).toBe(200);
    expect((await me(a)).user.emailVerified).toBe(false);

    // Only the hash is stored.
    const stored = await (await s.stores()).pg.query<{ verify_token_hash: string }>(
      'SELECT verify_token_hash FROM users WHERE email = $1',
      [a.email],
    );
    expect(stored.rows[0]!.verify_token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.rows[0]!.verify_token_hash).not.toContain(token);

    // The browser's form post.
    const posted = await s.app.inject({
      method: 'POST',
      url: '/api/auth/verify',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      payload: new URLSearchParams({ token }).toString(),
    });
    expect(posted.statusCode).toBe(200);
    expect(posted.body).toContain(`${a.email} is verified`);
    expect((await me(a)).user.emailVerified).toBe(true);
    expect((await s.app.inject({ method: 'POST', url: '/api/auth/verify', payload: { token } })).statusCode).toBe(404);

    // An expired link verifies nothing (the clock moved by hand: the link works 24 hours).
    const b = await signup(s, email(), undefined, { verified: false });
    const old = await verificationToken(s, b.email);
    await (await s.stores()).pg.query(
      "UPDATE users SET verify_expires_at = now() - interval '1 second' WHERE email = $1",
      [b.email],
    );
    const expired = await s.app.inject({ method: 'POST', url: '/api/auth/verify', payload: { token: old } });
    expect(expired.statusCode).toBe(404);
    expect(expired.json().error).toMatch(/expired/);
    expect((await me(b)).user.emailVerified).toBe(false);
  });

  it('the dashboard knows what is pending, and "resend" sends at most one link a minute', async () => {
    const a = await signup(s, email(), undefined, { verified: false });
    await waitFor('the first link', () => mailsTo(a.email).length === 1);
    const body = await me(a);
    expect(body.verification.verified).toBe(false);
    expect(body.verification.mailedAt).toEqual(expect.any(String));
    // The first link went out seconds ago: too soon for another.
    const again = await s.app.inject({ method: 'POST', url: '/api/auth/verification', headers: a.headers });
    expect(again.statusCode).toBe(429);
    // A minute later (moved by hand) the button sends a new link, which replaces the old one.
    const first = await verificationToken(s, a.email);
    await (await s.stores()).pg.query(
      "UPDATE users SET verify_mailed_at = now() - interval '2 minutes' WHERE email = $1",
      [a.email],
    );
    const resend = await s.app.inject({ method: 'POST', url: '/api/auth/verification', headers: a.headers });
    expect(resend.statusCode).toBe(200);
    await waitFor('the second link', () => mailsTo(a.email).length === 2);
    expect(
      (await s.app.inject({ method: 'POST', url: '/api/auth/verify', payload: { token: first } })).statusCode,
    ).toBe(404);
    // Without the CSRF header it is refused.
    const noCsrf = await s.app.inject({ method: 'POST', url: '/api/auth/verification', headers: { cookie: a.cookie } });
    expect(noCsrf.statusCode).toBe(403);
  });

  it("an unverified address gets no team-fallback alert and is not taken as a member's own address", async () => {
    const a = await signup(s, email(), undefined, { verified: false });
    const p = await dashboardProject(s, a, 'Unverified app');
    const st = sessionStart();
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st })).statusCode,
    ).toBe(201);
    // Listing their own (unverified) address: pending, like a stranger's.
    const patch = await s.app.inject({
      method: 'PATCH',
      url: `/api/dashboard/projects/${p.projectId}`,
      headers: a.headers,
      payload: { alertEmails: [a.email] },
    });
    expect(patch.json().alertRecipients).toEqual([{ email: a.email, confirmed: false }]);
    // Back to the team fallback: a team whose only member is unverified mails nobody.
    await s.app.inject({
      method: 'PATCH',
      url: `/api/dashboard/projects/${p.projectId}`,
      headers: a.headers,
      payload: { alertEmails: null },
    });
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/crash',
      headers: p.auth,
      payload: crash(st.sessionId, { stackTrace: `at ${randomUUID()} (a.js:1:1)` }),
    });
    expect(r.statusCode).toBe(201);
    const job = await waitFor('the alert job', async () => {
      const j = await (await s.stores()).pg.query<{ status: string; note: string | null }>(
        "SELECT o.status, o.note FROM alert_outbox o JOIN crash_groups g ON g.id = o.group_id WHERE g.project_id = $1 AND o.status <> 'pending'",
        [p.projectId],
      );
      return j.rows[0];
    });
    expect(job.note).toMatch(/no recipients/);
    // (The confirmation mail of the address listed a moment ago may go out: it is not an alert.)
    expect(mailsTo(a.email).filter((m) => /New crash/.test(m.headers.subject ?? ''))).toHaveLength(0);

    // Verified, the next group reaches them.
    await verifyEmail(s, a.email);
    await sleep(WINDOW_MS);
    await s.app.inject({
      method: 'POST',
      url: '/ingest/crash',
      headers: p.auth,
      payload: crash(st.sessionId, { stackTrace: `at ${randomUUID()} (b.js:1:1)` }),
    });
    await waitFor(
      'the alert to the verified member',
      () => mailsTo(a.email).some((m) => /New crash/.test(m.headers.subject ?? '')),
      WINDOW_MS + 10_000,
    );
  });
});
