import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from './server.ts';
import { everyReceivedMail, parseMail } from './smtp.ts';
import { waitFor } from './wait.ts';
import { verificationMails } from '../../src/workers/accountMails.ts';
import type { Mailer, OutgoingMail } from '../../src/workers/mailer.ts';
import { silentLog } from '../../src/lib/log.ts';

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

/** The token of the latest verification link mailed to `email`, read from the mail the service sent. */
export async function verificationToken(s: TestServer, email: string): Promise<string> {
  // This process's own verification sweep, with a mailer that keeps what it is given; when the
  // server's worker runs (RUN_WORKER), it may have sent the link first: then it is in DATA_DIR/mail.
  const kept: OutgoingMail[] = [];
  const memory: Mailer = {
    kind: 'file',
    async send(m) {
      kept.push(m);
      return 'memory';
    },
    close() {},
  };
  await verificationMails(s.svc.config, s.repos.accounts, memory, async () => true, silentLog)();
  const link = /token=([A-Za-z0-9_%-]+)/;
  const mine = kept.find((m) => m.to.includes(email));
  if (mine) return decodeURIComponent(link.exec(mine.text)![1]!);
  // Sent by the server's worker: to DATA_DIR/mail, or to the test's SMTP server when it has SMTP_URL.
  const dir = path.join(s.dataDir, 'mail');
  return waitFor(`the verification email to ${email}`, () => {
    const files = fs.existsSync(dir)
      ? fs
          .readdirSync(dir)
          .filter((f) => f.endsWith('.eml'))
          .sort()
          .reverse()
          .map((f) => parseMail(fs.readFileSync(path.join(dir, f), 'utf8')))
      : [];
    const mails = [...files, ...[...everyReceivedMail()].reverse()].filter(
      (m) => m.headers.to === email && /verify/i.test(m.headers.subject ?? ''),
    );
    const m = mails[0] && link.exec(mails[0].body.replace(/=\n/g, '').replace(/=3D/g, '='));
    return m ? decodeURIComponent(m[1]!) : null;
  });
}

/** Verifies the account's address the way its owner does: the token of the emailed link, posted. */
export async function verifyEmail(s: TestServer, email: string): Promise<void> {
  const token = await verificationToken(s, email);
  const r = await s.app.inject({ method: 'POST', url: '/api/auth/verify', payload: { token } });
  if (r.statusCode !== 200) throw new Error(`verify failed: ${r.statusCode} ${r.body}`);
}

/** A new account, signed in; its address verified unless `verified: false`. */
export async function signup(
  s: TestServer,
  email = `u-${randomUUID()}@example.com`,
  password = PASSWORD,
  opts: { verified?: boolean } = {},
): Promise<Account> {
  const r = await s.app.inject({ method: 'POST', url: '/api/auth/signup', payload: { email, password } });
  if (r.statusCode !== 201) throw new Error(`signup failed: ${r.statusCode} ${r.body}`);
  const body = r.json();
  const cookie = cookieFrom(r.headers['set-cookie']);
  if (opts.verified !== false) await verifyEmail(s, email);
  return {
    email,
    userId: body.user.id,
    teamId: body.teams[0].id,
    cookie,
    csrf: body.csrfToken,
    headers: { cookie, 'x-csrf-token': body.csrfToken },
  };
}

/** Creates a project through the dashboard; returns its id and the key shown once. */
export async function dashboardProject(s: TestServer, a: Account, name = 'My app') {
  const r = await s.app.inject({
    method: 'POST',
    url: '/api/dashboard/projects',
    headers: a.headers,
    payload: { name },
  });
  if (r.statusCode !== 201) throw new Error(`project failed: ${r.statusCode} ${r.body}`);
  const body = r.json();
  return {
    projectId: body.project.id as string,
    apiKey: body.apiKey as string,
    auth: { authorization: `Bearer ${body.apiKey}` },
  };
}

/** The owner invites the member into their team and the member accepts. */
export async function addMember(s: TestServer, owner: Account, member: Account, teamId = owner.teamId) {
  const inv = await s.app.inject({
    method: 'POST',
    url: `/api/dashboard/teams/${teamId}/members`,
    headers: owner.headers,
    payload: { email: member.email },
  });
  if (inv.statusCode !== 201) throw new Error(`invite failed: ${inv.statusCode} ${inv.body}`);
  const ok = await s.app.inject({
    method: 'POST',
    url: `/api/dashboard/invitations/${inv.json().invitation.id}/accept`,
    headers: member.headers,
  });
  if (ok.statusCode !== 200) throw new Error(`accept failed: ${ok.statusCode} ${ok.body}`);
}

/**
 * What a dashboard test in a browser starts from: a listening server, a signed-up account and a
 * project of its team named `name`.
 */
export async function listeningDashboard(name = 'Shop') {
  const s = await startTestServer({ RATE_LIMIT_AUTH_PER_MIN: '1000' });
  const base = await s.listen();
  const account = await signup(s);
  const project = await dashboardProject(s, account, name);
  return { s, base, account, project };
}
