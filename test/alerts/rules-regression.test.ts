import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startReceiver } from '../helpers/webhookReceiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { crash, sessionStart } from '../helpers/payloads.ts';
import { signup } from '../helpers/accounts.ts';
import { verifySignature } from '../../src/domain/webhooks.ts';

// The "crash-free sessions significantly below the previous release" rule, rules edited from the
// dashboard, and a webhook's test delivery: over HTTP, through the outbox and the in-process worker
// to a local receiver.

let s: TestServer;
let rx: Awaited<ReturnType<typeof startReceiver>>;
let rxUrl = '';

beforeAll(async () => {
  rx = await startReceiver();
  rxUrl = rx.url;
  s = await startTestServer({
    // the receiver is on 127.0.0.1 (private destinations are refused by default)
    WEBHOOK_ALLOW_PRIVATE: 'true',
    RUN_WORKER: 'true',
    PUBLIC_URL: 'https://flightrec.example.com',
    OUTBOX_POLL_MS: '100',
    OUTBOX_BACKOFF_BASE_MS: '100',
    OUTBOX_BACKOFF_MAX_MS: '200',
    ALERT_RULES_INTERVAL_MS: '86400000',
    RATE_LIMIT_AUTH_PER_MIN: '1000',
  });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await rx?.close();
});

const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  s.app.inject({ method, url, headers: s.admin, ...(payload ? { payload } : {}) });

async function sessions(auth: { authorization: string }, appVersion: string, n: number, crashed: number) {
  for (let i = 0; i < n; i++) {
    const st = sessionStart({ startedAt: Date.now() - 60_000 });
    st.device.appVersion = appVersion;
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: st })).statusCode,
    ).toBe(201);
    if (i < crashed) {
      const c = await s.app.inject({
        method: 'POST',
        url: '/ingest/crash',
        headers: auth,
        payload: crash(st.sessionId, { timestamp: Date.now() - 100 }),
      });
      expect(c.statusCode).toBe(201);
    }
  }
  // The rule reads the crashes once the crash pipeline recorded them.
  await s.settled();
}

/** Runs the outbox until the receiver has `n` posts on `path`. */
const posted = (path: string, n: number) =>
  waitFor(`${n} post(s) on ${path}`, async () => {
    await s.worker!.worker.runDue();
    const mine = rx.got.filter((x) => x.path === path);
    return mine.length >= n ? mine : undefined;
  });

describe('crash-free regression rule', () => {
  it('fires only when a release is significantly below the previous one, with a link to the Releases page', async () => {
    const p = await s.createProject('Rollout');
    const hook = await s.createWebhook(p.projectId, { url: `${rxUrl}/regression` });
    const r = await api('POST', `/api/projects/${p.projectId}/alert-rules`, {
      name: 'Rollout watch',
      kind: 'crash_free_regression',
      windowMinutes: 60,
      minSessions: 10,
      emails: [],
      webhookIds: [hook.id],
    });
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json()).toMatchObject({ kind: 'crash_free_regression', threshold: 0, minSessions: 10 });

    await sessions(p.auth, '1.9.0', 40, 0);
    // an early rollout, 1 crash in 10 sessions (90 %): its interval still overlaps 1.9.0's, no alarm
    await sessions(p.auth, '2.0.0', 10, 1);
    expect(await s.worker!.rules!.evaluate()).toBe(0);
    // more of the rollout, now 9 crashes in 20 (55 %): significantly below
    await sessions(p.auth, '2.0.0', 10, 8);
    expect(await s.worker!.rules!.evaluate()).toBe(1);
    expect(await s.worker!.rules!.evaluate()).toBe(0); // once per crossing
    const [post] = await posted('/regression', 1);
    const body = JSON.parse(post!.body);
    expect(body.event).toBe('rule.fired');
    expect(body.data).toMatchObject({
      kind: 'crash_free_regression',
      subject: '2.0.0',
      sessions: 20,
      link: `https://flightrec.example.com/#/p/${p.projectId}/releases`,
    });
    expect(body.data.value).toBeGreaterThan(0);
    expect(body.data.text).toMatch(
      /release 2\.0\.0 are 55% \(95 % interval [\d.]+–[\d.]+%, 20 sessions\), significantly below release 1\.9\.0 at 100%/,
    );
  }, 60_000);

  it('refuses a regression threshold out of range, and a spike rule without a threshold', async () => {
    const p = await s.createProject('Refused');
    const bad = await api('POST', `/api/projects/${p.projectId}/alert-rules`, {
      name: 'x',
      kind: 'crash_free_regression',
      threshold: 100,
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().details[0].path).toBe('/threshold');
    const none = await api('POST', `/api/projects/${p.projectId}/alert-rules`, { name: 'x', kind: 'spike' });
    expect(none.statusCode).toBe(422);
    expect((await api('GET', `/api/projects/${p.projectId}/alert-rules`)).json().items).toEqual([]);
  });
});

describe('rules and webhooks from the dashboard', () => {
  it('a member edits a rule and sends a signed test delivery through the outbox', async () => {
    const alice = await signup(s);
    const cp = await s.app.inject({
      method: 'POST',
      url: '/api/dashboard/projects',
      headers: alice.headers,
      payload: { name: 'Team app' },
    });
    const projectId = cp.json().project.id as string;
    const dash = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
      s.app.inject({
        method,
        url: `/api/dashboard/projects/${projectId}${url}`,
        headers: alice.headers,
        ...(payload ? { payload } : {}),
      });
    const rule = (
      await dash('POST', '/alert-rules', { name: 'Storm', kind: 'spike', threshold: 5, emails: [] })
    ).json();
    const edited = await dash('PATCH', `/alert-rules/${rule.id}`, {
      name: 'Big storm',
      threshold: 20,
      windowMinutes: 15,
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json()).toMatchObject({
      id: rule.id,
      name: 'Big storm',
      threshold: 20,
      windowMinutes: 15,
      kind: 'spike',
    });
    expect((await dash('PATCH', `/alert-rules/${rule.id}`, { threshold: 0.5 })).statusCode).toBe(422);
    expect((await dash('GET', `/alert-rules/${rule.id}`)).json().threshold).toBe(20);

    const hook = (await dash('POST', '/webhooks', { url: `${rxUrl}/test-delivery` })).json();
    const t = await dash('POST', `/webhooks/${hook.id}/test`);
    expect(t.statusCode, t.body).toBe(202);
    const [post] = await posted('/test-delivery', 1);
    expect(JSON.parse(post!.body)).toMatchObject({ event: 'webhook.test', data: { projectId, webhookId: hook.id } });
    expect(
      verifySignature(
        hook.secret,
        post!.body,
        String(post!.headers['x-flightrec-signature']),
        Math.floor(Date.now() / 1000),
      ),
    ).toBe(true);
    const log = await waitFor('the delivered test', async () => {
      const items = (await dash('GET', '/webhook-deliveries')).json().items as {
        id: string;
        event: string;
        status: string;
      }[];
      return items.find((d) => d.id === t.json().deliveryId && d.status === 'delivered');
    });
    expect(log.event).toBe('webhook.test');
    // another team's member cannot send one
    const eve = await signup(s);
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: `/api/dashboard/projects/${projectId}/webhooks/${hook.id}/test`,
          headers: eve.headers,
        })
      ).statusCode,
    ).toBe(404);
    expect((await dash('POST', '/webhooks/00000000-0000-4000-8000-000000000000/test')).statusCode).toBe(404);
  }, 60_000);
});
