import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { outboxIdle } from '../helpers/inspect.ts';
import { decodeQuotedPrintable, startSmtpServer, type TestSmtp } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';
import { crash, sessionStart } from '../helpers/payloads.ts';
import { verifySignature } from '../../src/domain/webhooks.ts';
import { postJson } from '../../src/workers/webhookJob.ts';
import { signup } from '../helpers/accounts.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ADMIN_TOKEN } from '../helpers/server.ts';
import { startReceiver } from '../helpers/webhookReceiver.ts';

// Regressions, spike and crash-free rules, and webhooks, end to end: ingestion over HTTP → the
// outbox (same transaction) → the in-process worker → SMTP and a local webhook receiver.

let s: TestServer;
let smtp: TestSmtp;
let rx: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  [smtp, rx] = await Promise.all([startSmtpServer(), startReceiver()]);
  s = await startTestServer({
    RUN_WORKER: 'true',
    SMTP_URL: smtp.url,
    ALERT_EMAIL_TO: 'oncall@example.com',
    PUBLIC_URL: 'https://flightrec.example.com',
    OUTBOX_POLL_MS: '100',
    OUTBOX_BACKOFF_BASE_MS: '100',
    OUTBOX_BACKOFF_MAX_MS: '200',
    ALERT_DIGEST_WINDOW_MS: '0',
    // the tests run the rules' pass themselves
    ALERT_RULES_INTERVAL_MS: '86400000',
    WEBHOOK_TIMEOUT_MS: '2000',
    // the receiver is on 127.0.0.1 (private destinations are refused by default)
    WEBHOOK_ALLOW_PRIVATE: 'true',
  });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await Promise.all([smtp?.close(), rx?.close()]);
});

const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  s.app.inject({ method, url, headers: s.admin, ...(payload ? { payload } : {}) });

async function session(
  auth: { authorization: string },
  appVersion: string,
  startedAt = Date.now() - 60_000,
): Promise<string> {
  const st = sessionStart({ startedAt });
  st.device.appVersion = appVersion;
  const r = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: st });
  expect(r.statusCode).toBe(201);
  return st.sessionId;
}

async function ingestCrash(auth: { authorization: string }, sessionId: string, over: Record<string, unknown>) {
  const r = await s.app.inject({
    method: 'POST',
    url: '/ingest/crash',
    headers: auth,
    payload: crash(sessionId, over),
  });
  expect(r.statusCode).toBe(201);
  // A 201 means spooled: the rules and the worker see the crash once it is recorded.
  await s.settled();
}

/** A subject as sent (RFC 2047 Q-encoded words) read back as text. */
const subject = (m: { headers: Record<string, string> }) =>
  (m.headers.subject ?? '').replace(/=\?UTF-8\?Q\?(.*?)\?=\s*/gi, (_, w: string) =>
    decodeQuotedPrintable(w.replace(/_/g, ' ')),
  );

/** A stack trace of its own group: letters only, since grouping ignores numbers, UUIDs and hex in frames. */
const letters = () => Array.from(randomBytes(12), (b) => String.fromCharCode(97 + (b % 26))).join('');
const stack = () => `at ${letters()} (app.js:1:1)\nat caller (app.js:2:2)\nat main (index.js:3:3)`;

/** Runs the outbox until no job is pending (retries after backoffs of 100-200 ms included). */
async function settle() {
  await outboxIdle(s);
}

describe('regression alert', () => {
  it('a resolved group reopened by a new version sends one alert to the new-group recipients and its webhooks; an old version sends none', async () => {
    const p = await s.createProject('Regressions');
    const hook = await s.createWebhook(p.projectId, {
      url: `${rx.url}/regressions`,
      events: ['crash_group.regressed'],
    });
    const both = await s.createWebhook(p.projectId, {
      url: `${rx.url}/both`,
      events: ['crash_group.new', 'crash_group.regressed'],
    });
    const st = stack();
    await ingestCrash(p.auth, await session(p.auth, '1.0'), { stackTrace: st, message: 'Boom 1' });
    const g = (
      await (
        await s.stores()
      ).pg.query<{ id: string }>('SELECT id FROM crash_groups WHERE project_id = $1', [p.projectId])
    ).rows[0]!.id;
    await waitFor('the new-group email', () =>
      smtp.mails.find((m) => m.headers['message-id'] === `<crash-group-${g}@flightrec>`),
    );
    expect(
      (await api('PATCH', `/api/projects/${p.projectId}/crash-groups/${g}`, { status: 'resolved' })).statusCode,
    ).toBe(200);

    // an old build still in the field: stays resolved, no alert
    await ingestCrash(p.auth, await session(p.auth, '1.0'), {
      stackTrace: st,
      message: 'Boom 1',
      timestamp: Date.now() - 1000,
    });
    await settle();
    const regressed = (m: { headers: Record<string, string> }) =>
      m.headers['message-id'] === `<crash-regressed-${g}-1.1@flightrec>`;
    expect(smtp.mails.filter((m) => m.headers['message-id']?.startsWith('<crash-regressed-'))).toHaveLength(0);

    // the new version: reopened, and exactly one regression alert however often it recurs
    await ingestCrash(p.auth, await session(p.auth, '1.1'), {
      stackTrace: st,
      message: 'Boom 1',
      timestamp: Date.now() - 500,
    });
    await ingestCrash(p.auth, await session(p.auth, '1.1'), {
      stackTrace: st,
      message: 'Boom 1',
      timestamp: Date.now() - 400,
    });
    const mail = await waitFor('the regression email', () => smtp.mails.find(regressed));
    expect(mail.rcptTo).toEqual(['oncall@example.com']);
    expect(subject(mail)).toContain('Regression: "Boom 1" is back in 1.1');
    expect(mail.body).toContain(`https://flightrec.example.com/#/p/${p.projectId}/crashes/${g}`);
    await settle();
    expect(smtp.mails.filter(regressed)).toHaveLength(1);
    const jobs = await (await s.stores()).pg.query<{ kind: string; ref: string | null; status: string }>(
      'SELECT kind, ref, status FROM alert_outbox WHERE group_id = $1 ORDER BY id',
      [g],
    );
    expect(jobs.rows).toEqual([
      { kind: 'new_crash_group', ref: null, status: 'done' },
      { kind: 'crash_group_new_webhooks', ref: null, status: 'done' },
      { kind: 'crash_group_regressed', ref: '1.1', status: 'done' },
      // the regression's webhook posts: a job of their own, like a new group's
      { kind: 'crash_group_regressed_webhooks', ref: '1.1', status: 'done' },
    ]);
    expect((await api('GET', `/api/projects/${p.projectId}/crash-groups/${g}`)).json().status).toBe('open');

    const hooks = await waitFor('the regression webhook', () =>
      rx.got.filter((x) => x.path === '/regressions').length ? rx.got.filter((x) => x.path === '/regressions') : null,
    );
    expect(hooks).toHaveLength(1);
    const body = JSON.parse(hooks[0]!.body);
    expect(body).toMatchObject({
      event: 'crash_group.regressed',
      data: { groupId: g, appVersion: '1.1', projectId: p.projectId },
    });
    expect(
      verifySignature(
        hook.secret,
        hooks[0]!.body,
        String(hooks[0]!.headers['x-flightrec-signature']),
        Math.floor(Date.now() / 1000),
      ),
    ).toBe(true);
    // the webhook that also asked for new groups got the first occurrence, then the regression
    const toBoth = await waitFor('both events', () =>
      rx.got.filter((x) => x.path === '/both').length === 2 ? rx.got.filter((x) => x.path === '/both') : null,
    );
    expect(toBoth.map((x) => JSON.parse(x.body).event).sort()).toEqual(['crash_group.new', 'crash_group.regressed']);
    const created = JSON.parse(toBoth.find((x) => x.body.includes('crash_group.new'))!.body);
    expect(created.data).toMatchObject({
      groupId: g,
      appVersion: '1.0',
      message: 'Boom 1',
      link: `https://flightrec.example.com/#/p/${p.projectId}/crashes/${g}`,
    });
    expect(
      verifySignature(
        both.secret,
        toBoth[0]!.body,
        String(toBoth[0]!.headers['x-flightrec-signature']),
        Math.floor(Date.now() / 1000),
      ),
    ).toBe(true);

    // resolved again at 1.1, back in 1.2: a second regression, a second alert
    await api('PATCH', `/api/projects/${p.projectId}/crash-groups/${g}`, { status: 'resolved' });
    await ingestCrash(p.auth, await session(p.auth, '1.2'), {
      stackTrace: st,
      message: 'Boom 1',
      timestamp: Date.now() - 300,
    });
    await waitFor('the second regression email', () =>
      smtp.mails.find((m) => m.headers['message-id'] === `<crash-regressed-${g}-1.2@flightrec>`),
    );
  }, 60_000);
});

describe('spike rule', () => {
  it('fires once when a group passes N occurrences in M minutes, re-arms below, and mails and posts', async () => {
    const p = await s.createProject('Spikes');
    const hook = await s.createWebhook(p.projectId, { url: `${rx.url}/spikes` });
    const r = await api('POST', `/api/projects/${p.projectId}/alert-rules`, {
      name: 'Crash storm',
      kind: 'spike',
      threshold: 3,
      windowMinutes: 10,
      cooldownMinutes: 0,
      webhookIds: [hook.id],
    });
    expect(r.statusCode, r.body).toBe(201);
    const rule = r.json();
    expect(rule).toMatchObject({
      kind: 'spike',
      threshold: 3,
      windowMinutes: 10,
      emails: null,
      webhookIds: [hook.id],
      enabled: true,
    });

    const st = stack();
    const sid = await session(p.auth, '2.0');
    for (let i = 0; i < 2; i++)
      await ingestCrash(p.auth, sid, { stackTrace: st, message: 'Storm', timestamp: Date.now() - 1000 + i });
    expect(await s.worker!.rules!.evaluate()).toBe(0);
    await ingestCrash(p.auth, sid, { stackTrace: st, message: 'Storm', timestamp: Date.now() - 500 });
    expect(await s.worker!.rules!.evaluate()).toBe(1);
    // still above: no second firing
    await ingestCrash(p.auth, sid, { stackTrace: st, message: 'Storm', timestamp: Date.now() - 400 });
    expect(await s.worker!.rules!.evaluate()).toBe(0);

    await settle();
    const posts = rx.got.filter((x) => x.path === '/spikes');
    expect(posts).toHaveLength(1);
    const body = JSON.parse(posts[0]!.body);
    expect(body).toMatchObject({
      event: 'rule.fired',
      data: { ruleId: rule.id, kind: 'spike', value: 3, threshold: 3 },
    });
    expect(body.data.text).toContain('"Storm" had 3 occurrences in 10 min');
    const mails = smtp.mails.filter(
      (m) => m.headers['x-flightrec-project'] === p.projectId && subject(m).includes('Crash storm'),
    );
    expect(mails).toHaveLength(1);
    expect(mails[0]!.rcptTo).toEqual(['oncall@example.com']);

    // back below (threshold raised): re-armed; crossing again fires again
    expect(
      (await api('PATCH', `/api/projects/${p.projectId}/alert-rules/${rule.id}`, { threshold: 100 })).statusCode,
    ).toBe(200);
    expect(await s.worker!.rules!.evaluate()).toBe(0);
    await api('PATCH', `/api/projects/${p.projectId}/alert-rules/${rule.id}`, { threshold: 3 });
    expect(await s.worker!.rules!.evaluate()).toBe(1);
  }, 60_000);
});

describe('crash-free rule', () => {
  it('fires for a release whose crash-free sessions fall below X %, not for one under its minimum sessions', async () => {
    const p = await s.createProject('Health');
    const hook = await s.createWebhook(p.projectId, { url: `${rx.url}/health` });
    const r = await api('POST', `/api/projects/${p.projectId}/alert-rules`, {
      name: 'Release health',
      kind: 'crash_free',
      threshold: 90,
      windowMinutes: 60,
      minSessions: 10,
      emails: [],
      webhookIds: [hook.id],
    });
    expect(r.statusCode, r.body).toBe(201);
    const bad: string[] = [];
    for (let i = 0; i < 10; i++) bad.push(await session(p.auth, '3.0'));
    await ingestCrash(p.auth, bad[0]!, { stackTrace: stack(), timestamp: Date.now() - 100 });
    expect(await s.worker!.rules!.evaluate()).toBe(0); // 90 %: not below
    await ingestCrash(p.auth, bad[1]!, { stackTrace: stack(), timestamp: Date.now() - 100 });
    // a handled crash does not count against crash-free sessions
    await ingestCrash(p.auth, bad[2]!, {
      stackTrace: stack(),
      isFatal: false,
      handled: true,
      timestamp: Date.now() - 100,
    });
    // two sessions, one crashed: under the minimum, not judged
    const few = [await session(p.auth, '3.1'), await session(p.auth, '3.1')];
    await ingestCrash(p.auth, few[0]!, { stackTrace: stack(), timestamp: Date.now() - 100 });
    expect(await s.worker!.rules!.evaluate()).toBe(1);
    expect(await s.worker!.rules!.evaluate()).toBe(0);
    await settle();
    const posts = rx.got.filter((x) => x.path === '/health');
    expect(posts).toHaveLength(1);
    expect(JSON.parse(posts[0]!.body).data).toMatchObject({
      kind: 'crash_free',
      subject: '3.0',
      value: 80,
      sessions: 10,
    });
    // emails: [] — webhook only
    expect(
      smtp.mails.filter(
        (m) => m.headers['x-flightrec-project'] === p.projectId && m.headers['message-id']?.startsWith('<rule-fired-'),
      ),
    ).toHaveLength(0);
  }, 60_000);
});

describe('webhooks', () => {
  it('signs each delivery, retries after a 500 with backoff, and logs every attempt', async () => {
    const p = await s.createProject('Hooks');
    const created = await s.createWebhook(p.projectId, { url: `${rx.url}/retry`, events: ['crash_group.regressed'] });
    expect(created.secret).toMatch(/^whsec_/);
    // the secret is shown once
    const listed = (await api('GET', `/api/projects/${p.projectId}/webhooks`)).json().items;
    expect(listed).toHaveLength(1);
    expect(listed[0]).not.toHaveProperty('secret');
    expect(JSON.stringify(listed)).not.toContain(created.secret);

    await api('POST', `/api/projects/${p.projectId}/alert-rules`, {
      name: 'One',
      kind: 'spike',
      threshold: 1,
      emails: [],
      webhookIds: [created.id],
    });
    rx.answers.push(500);
    await ingestCrash(p.auth, await session(p.auth, '4.0'), {
      stackTrace: stack(),
      message: 'Retry me',
      timestamp: Date.now() - 100,
    });
    expect(await s.worker!.rules!.evaluate()).toBe(1);
    const posts = await waitFor('a retried delivery', async () => {
      await s.worker!.worker.runDue();
      const got = rx.got.filter((x) => x.path === '/retry');
      return got.length >= 2 ? got : null;
    });
    expect(posts).toHaveLength(2);
    for (const x of posts) {
      expect(x.headers['content-type']).toBe('application/json');
      expect(x.headers['x-flightrec-event']).toBe('rule.fired');
      expect(
        verifySignature(
          created.secret,
          x.body,
          String(x.headers['x-flightrec-signature']),
          Math.floor(Date.now() / 1000),
        ),
      ).toBe(true);
      expect(
        verifySignature(
          'whsec_wrong',
          x.body,
          String(x.headers['x-flightrec-signature']),
          Math.floor(Date.now() / 1000),
        ),
      ).toBe(false);
    }
    expect(posts[0]!.headers['x-flightrec-delivery']).toBe(posts[1]!.headers['x-flightrec-delivery']);

    const log = await waitFor('the delivery log', async () => {
      const r = await api('GET', `/api/projects/${p.projectId}/webhook-deliveries`);
      expect(r.statusCode).toBe(200);
      const items = r.json().items;
      return items[0]?.status === 'delivered' ? items : null;
    });
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      webhookId: created.id,
      event: 'rule.fired',
      status: 'delivered',
      attempts: 2,
      responseCode: 200,
      error: null,
    });
    expect(typeof log[0].latencyMs).toBe('number');
    expect(log[0].deliveredAt).not.toBeNull();
  }, 60_000);

  it("the delivery log shows a failed attempt's status and timing, never the receiver's answer", async () => {
    const p = await s.createProject('Answer text');
    const created = await s.createWebhook(p.projectId, { url: `${rx.url}/answer`, events: ['crash_group.new'] });
    rx.answers.push(503, 503, 503, 503, 503, 503);
    await ingestCrash(p.auth, await session(p.auth, '4.1'), {
      stackTrace: stack(),
      message: 'Answer me',
      timestamp: Date.now() - 100,
    });
    const log = await waitFor('a failed attempt in the log', async () => {
      await s.worker!.worker.runDue();
      const items = (await api('GET', `/api/projects/${p.projectId}/webhook-deliveries`)).json().items;
      return items.find(
        (x: { webhookId: string; responseCode: number | null }) => x.webhookId === created.id && x.responseCode === 503,
      );
    });
    expect(log.error).toBe('HTTP 503');
    expect(JSON.stringify(log)).not.toContain('internal-secret');
    rx.answers.length = 0;
  }, 60_000);

  it("a Slack incoming-webhook URL gets Slack's {text} payload and no signature", async () => {
    const p = await s.createProject('Slack');
    const slack = await s.createWebhook(p.projectId, { url: 'https://hooks.slack.com/services/T000/B000/XXXX' });
    await api('POST', `/api/projects/${p.projectId}/alert-rules`, {
      name: 'To Slack',
      kind: 'spike',
      threshold: 1,
      emails: [],
      webhookIds: [slack.id],
    });
    await ingestCrash(p.auth, await session(p.auth, '5.0'), {
      stackTrace: stack(),
      message: 'Slack me',
      timestamp: Date.now() - 100,
    });
    // the worker is paused so nothing is posted to Slack from a test: the stored body is what Slack would get
    const outbox = s.worker!.worker;
    await outbox.stop();
    try {
      expect(await s.worker!.rules!.evaluate()).toBe(1);
      const row = (
        await (
          await s.stores()
        ).pg.query<{ body: string }>('SELECT body FROM webhook_deliveries WHERE webhook_id = $1', [slack.id])
      ).rows;
      expect(row).toHaveLength(1);
      const body = JSON.parse(row[0]!.body);
      expect(Object.keys(body)).toEqual(['text']);
      expect(body.text).toMatch(
        /^\[Slack\] To Slack: "Slack me" had 1 occurrences in 60 min \(threshold 1\)\n<https:\/\/flightrec\.example\.com\/#\/p\/.+\/crashes\/.+\|Open in flightrec>$/,
      );
      // not sent to Slack from a test: the delivery is dropped with its webhook
      await api('DELETE', `/api/projects/${p.projectId}/webhooks/${slack.id}`);
    } finally {
      outbox.start();
    }
  }, 60_000);

  it('refuses bad input with the contract error shape and changes nothing', async () => {
    const p = await s.createProject('Bad input');
    const bad = await api('POST', `/api/projects/${p.projectId}/webhooks`, { url: 'ftp://example.com/x' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({ error: expect.any(String), details: [{ path: '/url' }] });
    const noKind = await api('POST', `/api/projects/${p.projectId}/alert-rules`, { name: 'x', threshold: 1 });
    expect(noKind.statusCode).toBe(400);
    const pct = await api('POST', `/api/projects/${p.projectId}/alert-rules`, {
      name: 'x',
      kind: 'crash_free',
      threshold: 150,
    });
    expect(pct.statusCode).toBe(422);
    const foreign = await api('POST', `/api/projects/${p.projectId}/alert-rules`, {
      name: 'x',
      kind: 'spike',
      threshold: 5,
      webhookIds: [randomUUID()],
    });
    expect(foreign.statusCode).toBe(422);
    expect(foreign.json().details[0].path).toBe('/webhookIds/0');
    expect((await api('GET', `/api/projects/${p.projectId}/alert-rules`)).json().items).toEqual([]);
    expect((await api('GET', `/api/projects/${randomUUID()}/alert-rules`)).statusCode).toBe(404);
    expect((await s.app.inject({ method: 'GET', url: `/api/projects/${p.projectId}/alert-rules` })).statusCode).toBe(
      401,
    );
  });
});

describe('bounds of a delivery', () => {
  it('WEBHOOK_ALLOW_PRIVATE=false refuses a loopback receiver after DNS; a slow receiver is cut at the timeout; a long answer is read only a few KB', async () => {
    await expect(postJson(`${rx.url}/private`, '{}', {}, { timeoutMs: 2000, allowPrivate: false })).rejects.toThrow(
      /private address/,
    );
    await expect(
      postJson(`http://localhost:${new URL(rx.url).port}/private`, '{}', {}, { timeoutMs: 2000, allowPrivate: false }),
    ).rejects.toThrow(/private address/);
    expect(rx.got.filter((x) => x.path === '/private')).toHaveLength(0);
    expect((await postJson(`${rx.url}/private-ok`, '{}', {}, { timeoutMs: 2000, allowPrivate: true })).status).toBe(
      200,
    );

    const slow = http.createServer((req, res) => {
      if (req.url === '/big') {
        res.write('x'.repeat(64 * 1024));
        return;
      }
      if (req.url === '/redirect') {
        res.writeHead(302, { location: `${rx.url}/redirected` }).end();
      }
      // else: never answers
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const at = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    try {
      const t0 = Date.now();
      await expect(postJson(`${at}/hang`, '{}', {}, { timeoutMs: 300, allowPrivate: true })).rejects.toThrow(
        /timed out/,
      );
      expect(Date.now() - t0).toBeLessThan(2000);
      const big = await postJson(`${at}/big`, '{}', {}, { timeoutMs: 2000, allowPrivate: true });
      expect(big.body.length).toBeLessThanOrEqual(4096);
      const moved = await postJson(`${at}/redirect`, '{}', {}, { timeoutMs: 2000, allowPrivate: true });
      expect(moved.status).toBe(302);
      expect(rx.got.filter((x) => x.path === '/redirected')).toHaveLength(0);
    } finally {
      slow.closeAllConnections();
      await new Promise<void>((r) => slow.close(() => r()));
    }
  });
});

describe('rules from the dashboard', () => {
  it("a member's rule mails members at once, an outside address waits for its confirmation, other teams see nothing", async () => {
    const alice = await signup(s);
    const eve = await signup(s);
    const stranger = `stranger-${randomUUID()}@example.org`;
    const cp = await s.app.inject({
      method: 'POST',
      url: '/api/dashboard/projects',
      headers: alice.headers,
      payload: { name: 'Team app' },
    });
    expect(cp.statusCode).toBe(201);
    const projectId = cp.json().project.id as string;
    const auth = { authorization: `Bearer ${cp.json().apiKey}` };
    const dash = (method: 'GET' | 'POST', url: string, who = alice, payload?: object) =>
      s.app.inject({
        method,
        url: `/api/dashboard/projects/${projectId}${url}`,
        headers: who.headers,
        ...(payload ? { payload } : {}),
      });

    const created = await dash('POST', '/alert-rules', alice, {
      name: 'Team storm',
      kind: 'spike',
      threshold: 1,
      emails: [alice.email, stranger],
    });
    expect(created.statusCode, created.body).toBe(201);
    expect((await dash('GET', '/alert-rules', eve)).statusCode).toBe(404);
    expect((await dash('POST', '/webhooks', eve, { url: `${rx.url}/eve` })).statusCode).toBe(404);
    const listed = (
      await s.app.inject({ method: 'GET', url: '/api/dashboard/projects', headers: alice.headers })
    ).json();
    const states = listed.data.find((x: { id: string }) => x.id === projectId).alertRecipients;
    expect(states).toEqual(
      [
        { email: alice.email, confirmed: true },
        { email: stranger, confirmed: false },
      ].sort((x, y) => x.email.localeCompare(y.email)),
    );

    await ingestCrash(auth, await session(auth, '6.0'), {
      stackTrace: stack(),
      message: 'Team crash',
      timestamp: Date.now() - 100,
    });
    expect(await s.worker!.rules!.evaluate()).toBe(1);
    const mail = await waitFor('the rule email', async () => {
      await s.worker!.worker.runDue();
      return smtp.mails.find(
        (m) => m.headers['x-flightrec-project'] === projectId && m.headers['message-id']?.startsWith('<rule-fired-'),
      );
    });
    expect(mail.rcptTo).toEqual([alice.email]);
  }, 60_000);
});

describe('the CLI', () => {
  it('creates a webhook (printing its secret once), a rule naming it, lists and deletes them', async () => {
    const p = await s.createProject('CLI');
    await s.app.listen({ host: '127.0.0.1', port: 0 });
    const address = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`;
    const cli = (...args: string[]) =>
      promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'src/cli/main.ts', ...args, '--url', address, '--token', ADMIN_TOKEN],
        { cwd: process.cwd() },
      );
    const made = await cli(
      'webhooks',
      'create',
      '--project',
      p.projectId,
      '--endpoint',
      `${rx.url}/cli`,
      '--regressions',
    );
    const secret = /Signing secret \(shown once, keep it\): (whsec_\S+)/.exec(made.stdout)?.[1];
    expect(secret).toBeDefined();
    const hooks = (await api('GET', `/api/projects/${p.projectId}/webhooks`)).json().items;
    expect(hooks).toMatchObject([{ url: `${rx.url}/cli`, events: ['crash_group.regressed'] }]);
    const rule = await cli(
      'alert-rules',
      'create',
      '--project',
      p.projectId,
      '--name',
      'CLI storm',
      '--kind',
      'spike',
      '--threshold',
      '20',
      '--window',
      '5',
      '--emails',
      'none',
      '--webhooks',
      hooks[0].id,
      '--json',
    );
    expect(JSON.parse(rule.stdout)).toMatchObject({
      name: 'CLI storm',
      threshold: 20,
      windowMinutes: 5,
      emails: [],
      webhookIds: [hooks[0].id],
    });
    const listed = await cli('alert-rules', 'list', '--project', p.projectId, '--json');
    expect(JSON.parse(listed.stdout).items).toHaveLength(1);
    expect(listed.stdout).not.toContain(secret);
    const refused = await cli(
      'alert-rules',
      'create',
      '--project',
      p.projectId,
      '--name',
      'x',
      '--kind',
      'crash_free',
      '--threshold',
      '150',
    ).catch((e) => e);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('threshold');
    expect((await cli('webhooks', 'delete', '--project', p.projectId, hooks[0].id)).stdout).toContain('Deleted');
    expect((await api('GET', `/api/projects/${p.projectId}/webhooks`)).json().items).toEqual([]);
  }, 60_000);
});
