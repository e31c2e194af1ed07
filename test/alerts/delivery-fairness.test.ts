import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startSmtpServer, type TestSmtp } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';
import { crash, sessionStart } from '../helpers/payloads.ts';
import { createAlertWorker, type AlertWorker } from '../../src/workers/index.ts';
import { postgresRepos } from '../../src/repos/index.ts';
import { resolveSecretsKey } from '../../src/services/secretsKey.ts';
import { silentLog } from '../../src/lib/log.ts';

// Issue 32, finding 4: one project's webhooks to a receiver that never answers held every other
// project's alerts (an email after 199 s, a webhook after 379 s): the outbox ran its jobs one at a
// time. Deliveries now run through a fair queue, and webhooks and rules per project are capped.

/** A receiver that reads each request and never answers it; `open` counts the requests it holds. */
async function startHangingReceiver() {
  const held = new Set<http.ServerResponse>();
  let got = 0;
  const server = http.createServer((req, res) => {
    got++;
    held.add(res);
    res.on('close', () => held.delete(res));
    req.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open: () => held.size,
    got: () => got,
    close: () =>
      new Promise<void>((r) => {
        for (const res of held) res.destroy();
        server.close(() => r());
      }),
  };
}

async function startReceiver() {
  const got: string[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      got.push(req.url ?? '');
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    got,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

let s: TestServer;
let smtp: TestSmtp;
let dead: Awaited<ReturnType<typeof startHangingReceiver>>;
let rx: Awaited<ReturnType<typeof startReceiver>>;
/** A second worker, as another process on this Postgres would run (the queue-across-workers test). */
let other: AlertWorker | undefined;

beforeAll(async () => {
  [smtp, dead, rx] = await Promise.all([startSmtpServer(), startHangingReceiver(), startReceiver()]);
  s = await startTestServer({
    RUN_WORKER: 'true',
    SMTP_URL: smtp.url,
    ALERT_EMAIL_TO: 'oncall@example.com',
    OUTBOX_POLL_MS: '100',
    ALERT_DIGEST_WINDOW_MS: '0',
    ALERT_RULES_INTERVAL_MS: '86400000',
    // a dead receiver holds its delivery for the whole test
    WEBHOOK_TIMEOUT_MS: '120000',
    WEBHOOK_ALLOW_PRIVATE: 'true',
  });
}, 60_000);
afterAll(async () => {
  await dead?.close();
  // its jobs in hand end with the dead receiver's connections, and record into this server's Postgres
  await other?.stop();
  await s?.close();
  await Promise.all([smtp?.close(), rx?.close()]);
});

const api = (method: 'POST' | 'GET', url: string, payload?: object) =>
  s.app.inject({ method, url, headers: s.admin, ...(payload ? { payload } : {}) });

async function crashIn(p: { apiKey: string }) {
  const auth = { authorization: `Bearer ${p.apiKey}` };
  const st = sessionStart({ startedAt: Date.now() - 60_000 });
  expect((await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: st })).statusCode).toBe(
    201,
  );
  const letters = Array.from(randomBytes(12), (b) => String.fromCharCode(97 + (b % 26))).join('');
  const r = await s.app.inject({
    method: 'POST',
    url: '/ingest/crash',
    headers: auth,
    payload: crash(st.sessionId, { stackTrace: `Error: ${letters}\n    at ${letters} (app.js:1:1)` }),
  });
  expect(r.statusCode).toBe(201);
}

describe('a fair delivery queue', () => {
  it('a project whose 20 webhooks never answer delays neither the email nor the webhook of another project', async () => {
    const a = await s.createProject('A with dead receivers');
    const b = await s.createProject('B');
    for (let i = 0; i < 20; i++) {
      await s.createWebhook(a.projectId, { url: `${dead.url}/a${i}`, events: ['crash_group.new'] });
    }
    await s.createWebhook(b.projectId, { url: `${rx.url}/b`, events: ['crash_group.new'] });

    await crashIn(a);
    // A's deliveries are out and held by its receiver (two at a time: OUTBOX_PROJECT_CONCURRENCY)
    await waitFor("A's deliveries held by the dead receiver", () => dead.open() >= 2);
    const mailsBefore = smtp.mails.length;
    await crashIn(b);
    await waitFor("B's webhook", () => rx.got.includes('/b'), 30_000);
    await waitFor(
      "B's alert email",
      () => smtp.mails.slice(mailsBefore).some((m) => m.raw.includes(b.projectId)),
      30_000,
    );
    // A's receiver still holds its deliveries: B's went out beside them, not after them
    expect(dead.open()).toBeGreaterThanOrEqual(1);
    // and A never had more than its cap in flight
    expect(dead.got()).toBeLessThanOrEqual(2);
  }, 90_000);
});

describe('the queue across workers', () => {
  it("a second worker (another process's) neither runs a webhook's next delivery beside the one in flight nor passes the project's cap", async () => {
    // As another process on this Postgres would: its own repos and worker, the same caps.
    const repos = postgresRepos(s.svc.stores.pg, { changeLagMs: 0 });
    // Its rounds, counted on the real query: what the test waits for below.
    let rounds = 0;
    const laneHeads = repos.outbox.laneHeads;
    repos.outbox.laneHeads = (...a) => {
      rounds++;
      return laneHeads(...a);
    };
    other = createAlertWorker(s.svc.config, { repos, secretsKey: resolveSecretsKey(s.svc.config).key }, silentLog);
    other.start();
    const c = await s.createProject('C, three dead receivers');
    for (let i = 0; i < 3; i++) {
      await s.createWebhook(c.projectId, { url: `${dead.url}/c${i}`, events: ['crash_group.new'] });
    }
    const d = await s.createProject('D, one dead receiver');
    await s.createWebhook(d.projectId, { url: `${dead.url}/d`, events: ['crash_group.new'] });
    const gotBefore = dead.got();
    // C: three deliveries, one per webhook; D: two deliveries to its one webhook
    await crashIn(c);
    await crashIn(d);
    await crashIn(d);
    await waitFor('deliveries held by the dead receiver', () => dead.got() - gotBefore >= 3, 30_000);
    // Both workers poll every 100 ms: five more rounds of the second one, each a chance to take
    // more than it may (the server's worker goes round beside it).
    const seen = rounds;
    await waitFor('five more rounds of the second worker', () => rounds >= seen + 5, 30_000);
    // C: two at once (OUTBOX_PROJECT_CONCURRENCY) across both workers, not two each; D: one
    // delivery at a time to its webhook, not one per worker.
    expect(dead.got() - gotBefore).toBe(3);
  }, 90_000);
});

describe('caps per project', () => {
  it('20 webhooks and 100 alert rules, even when created at once; one more is a 409 naming the cap, and nothing is created', async () => {
    const p = await s.createProject('capped');
    // Concurrent creates take turns on the project's row: on a server Postgres, a count and an
    // insert in one statement let several of them see the same count and pass the cap together.
    const hooks = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        api('POST', `/api/projects/${p.projectId}/webhooks`, { url: `${rx.url}/c${i}` }),
      ),
    );
    expect(hooks.filter((r) => r.statusCode === 201)).toHaveLength(20);
    const refusedHooks = hooks.filter((r) => r.statusCode !== 201);
    expect(refusedHooks.map((r) => r.statusCode)).toEqual(Array(5).fill(409));
    expect(refusedHooks[0]?.json().error).toContain('WEBHOOKS_MAX_PER_PROJECT');
    expect((await api('GET', `/api/projects/${p.projectId}/webhooks`)).json().items).toHaveLength(20);

    const rules = await Promise.all(
      Array.from({ length: 105 }, (_, i) =>
        api('POST', `/api/projects/${p.projectId}/alert-rules`, {
          name: `r${i}`,
          kind: 'spike',
          threshold: 5,
          emails: [],
        }),
      ),
    );
    expect(rules.filter((r) => r.statusCode === 201)).toHaveLength(100);
    const refusedRules = rules.filter((r) => r.statusCode !== 201);
    expect(refusedRules.map((r) => r.statusCode)).toEqual(Array(5).fill(409));
    expect(refusedRules[0]?.json().error).toContain('ALERT_RULES_MAX_PER_PROJECT');
    expect((await api('GET', `/api/projects/${p.projectId}/alert-rules`)).json().items).toHaveLength(100);
    // another project is not held by this one's count
    const q = await s.createProject('other');
    expect((await api('POST', `/api/projects/${q.projectId}/webhooks`, { url: `${rx.url}/q` })).statusCode).toBe(201);
  }, 60_000);
});
