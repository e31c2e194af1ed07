import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { outboxIdle } from '../helpers/inspect.ts';
import { parseMail } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';
import { crash, sessionStart } from '../helpers/payloads.ts';
import { dashboardProject, signup, type Account } from '../helpers/accounts.ts';

// The mail relay of the security probe: a self-signed-up user lists outside addresses on a
// project; they must get nothing but one confirmation email until they confirm.
// Long enough for six crashes to be ingested inside one window on a loaded machine (the digest test).
const WINDOW_MS = 4000;
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({
    RUN_WORKER: 'true',
    OUTBOX_POLL_MS: '100',
    ALERT_DIGEST_WINDOW_MS: String(WINDOW_MS),
    PUBLIC_URL: 'http://localhost:3000',
  });
});
afterAll(async () => {
  await s?.close();
});

const mailDir = () => path.join(s.dataDir, 'mail');
function mails() {
  if (!fs.existsSync(mailDir())) return [];
  return fs
    .readdirSync(mailDir())
    .filter((f) => f.endsWith('.eml'))
    .map((f) => {
      const file = path.join(mailDir(), f);
      return { file, ...parseMail(fs.readFileSync(file, 'utf8')) };
    });
}
const mailsTo = (addr: string) => mails().filter((m) => (m.headers.to ?? '').split(/,\s*/).includes(addr));
// A member's mail without the link that verified their address at sign-up: this server's worker
// may have sent it (or the sign-up helper's own sweep took it first).
const alertsTo = (addr: string) => mailsTo(addr).filter((m) => !/Verify your email/.test(m.headers.subject ?? ''));

async function newCrash(a: { auth: { authorization: string } }, sessionId: string) {
  const r = await s.app.inject({
    method: 'POST',
    url: '/ingest/crash',
    headers: a.auth,
    payload: crash(sessionId, { stackTrace: `at ${randomUUID()} (x.js:1:1)` }),
  });
  expect(r.statusCode).toBe(201);
}

async function projectWithSession(a: Account) {
  const p = await dashboardProject(s, a, 'Relay <b>test</b>');
  const st = sessionStart();
  expect(
    (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st })).statusCode,
  ).toBe(201);
  return { ...p, sessionId: st.sessionId };
}

describe('alert recipients', () => {
  it('an outside address gets one confirmation email and no alert until it confirms; members get alerts at once', async () => {
    const alice = await signup(s);
    const stranger = `stranger-${randomUUID()}@example.org`;
    const p = await projectWithSession(alice);
    const patch = await s.app.inject({
      method: 'PATCH',
      url: `/api/dashboard/projects/${p.projectId}`,
      headers: alice.headers,
      payload: { alertEmails: [alice.email, stranger] },
    });
    expect(patch.statusCode).toBe(200);
    expect(patch.json().alertRecipients).toEqual(
      [
        { email: alice.email, confirmed: true },
        { email: stranger, confirmed: false },
      ].sort((x, y) => x.email.localeCompare(y.email)),
    );

    const [confirmation] = await waitFor('the confirmation email', () =>
      mailsTo(stranger).length ? mailsTo(stranger) : null,
    );
    expect(confirmation!.headers.subject).not.toContain('Relay');
    expect(fs.statSync(confirmation!.file).mode & 0o777).toBe(0o600);
    const link = /http:\/\/localhost:3000(\/api\/alert-recipients\/confirm\?token=[A-Za-z0-9_%-]+)/.exec(
      confirmation!.body,
    )![1]!;

    await newCrash(p, p.sessionId);
    const [alert] = await waitFor('the alert', () => (alertsTo(alice.email).length ? alertsTo(alice.email) : null));
    expect(alert!.headers.subject).toContain('New crash in Relay');
    expect(fs.statSync(alert!.file).mode & 0o777).toBe(0o600);
    expect(mailsTo(stranger)).toHaveLength(1); // the confirmation only

    // Opening the link (GET, HEAD: a mail scanner) shows a button and confirms nothing.
    const page = await s.app.inject({ method: 'GET', url: link });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('<form method="post" action="/api/alert-recipients/confirm">');
    expect(page.body).not.toContain('<script');
    expect((await s.app.inject({ method: 'HEAD', url: link })).statusCode).toBe(200);
    const listed = async () =>
      (await s.app.inject({ method: 'GET', url: '/api/dashboard/projects', headers: alice.headers }))
        .json()
        .data.find((x: { id: string }) => x.id === p.projectId).alertRecipients;
    expect(await listed()).toContainEqual({ email: stranger, confirmed: false });
    // The button posts the form.
    const token = decodeURIComponent(new URL(`http://x${link}`).searchParams.get('token')!);
    const confirmed = await s.app.inject({
      method: 'POST',
      url: '/api/alert-recipients/confirm',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      payload: new URLSearchParams({ token }).toString(),
    });
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.headers['content-type']).toMatch(/^text\/html/);
    expect(confirmed.body).toContain('Relay &lt;b&gt;test&lt;/b&gt;');
    expect(await listed()).toContainEqual({ email: stranger, confirmed: true });
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: '/api/alert-recipients/confirm',
          payload: { token: 'not-a-real-token-at-all' },
        })
      ).statusCode,
    ).toBe(404);

    // After confirming, the next alert (after the throttle window) reaches the stranger too.
    await newCrash(p, p.sessionId);
    await waitFor('an alert to the confirmed address', () => mailsTo(stranger).length === 2, WINDOW_MS + 10_000);
  });

  it('a burst of new groups in one project becomes one digest; a project with no list mails its team', async () => {
    const bob = await signup(s);
    const p = await projectWithSession(bob);
    await newCrash(p, p.sessionId);
    await waitFor('the first alert', () => alertsTo(bob.email).length === 1);
    for (let i = 0; i < 6; i++) await newCrash(p, p.sessionId);
    const digest = await waitFor(
      'the digest',
      () => alertsTo(bob.email).find((m) => /6 new crash groups/.test(m.headers.subject ?? '')),
      WINDOW_MS + 10_000,
    );
    expect(digest.headers['message-id']).toMatch(/^<crash-digest-/);
    await outboxIdle(s);
    expect(alertsTo(bob.email)).toHaveLength(2);
  });
});
