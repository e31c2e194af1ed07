import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { crash, sessionStart } from '../helpers/payloads.ts';
import { dashboardProject, signup, type Account } from '../helpers/accounts.ts';

// Messages (level info / warning) kept apart from crashes and errors: the crash list, its
// counts, release health and spike rules; environments filter the list and the crash page.
let s: TestServer;
let a: Account;
let projectId: string;
let auth: { authorization: string };
beforeAll(async () => {
  s = await startTestServer({ RUN_WORKER: 'true', ALERT_RULES_INTERVAL_MS: '86400000', OUTBOX_POLL_MS: '100' });
  a = await signup(s);
  ({ projectId, auth } = await dashboardProject(s, a));
}, 60_000);
afterAll(async () => {
  await s?.close();
});

const ingest = (url: string, payload: object) => s.app.inject({ method: 'POST', url, headers: auth, payload });
const dashGet = (url: string) =>
  s.app.inject({ method: 'GET', url: `/api/dashboard/projects/${projectId}${url}`, headers: a.headers });
const heads = (r: { data: { stackHead: string }[] }) => r.data.map((g) => g.stackHead);

const NOW = Date.now();
let ts = NOW - 120_000;
async function report(stackTrace: string, over: Record<string, unknown>, appVersion = '3.0') {
  const st = sessionStart({ startedAt: NOW - 600_000 });
  st.device.appVersion = appVersion;
  expect((await ingest('/ingest/session', st)).statusCode).toBe(201);
  const r = await ingest('/ingest/crash', crash(st.sessionId, { stackTrace, timestamp: ts++, ...over }));
  expect(r.statusCode, r.body).toBe(201);
  return st.sessionId;
}
const dash = async (url: string) => {
  const r = await dashGet(url);
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
};

const FATAL = `at fatalSite${randomUUID().slice(0, 8)} (app.js:1:1)`;
const HANDLED = `at handledSite (app.js:2:2)`;
const MESSAGE = `at messageSite (app.js:3:3)`;

describe('levels and environments', () => {
  beforeAll(async () => {
    await report(FATAL, { environment: 'production' });
    await report(FATAL, { environment: 'production' });
    await report(FATAL, { environment: 'staging' });
    await report(HANDLED, { isFatal: false, handled: true, environment: 'staging' });
    for (let i = 0; i < 4; i++) {
      const level = i % 2 ? 'info' : 'warning';
      await report(MESSAGE, { isFatal: false, handled: true, level, message: 'cart shown', environment: 'production' });
    }
  });

  it('the crash list shows crashes and errors by default; messages have their own filter', async () => {
    const all = await dash('/crash-groups');
    expect(all.data.map((g: { stackHead: string }) => g.stackHead).sort()).toEqual([FATAL, HANDLED].sort());
    expect(all.data.find((g: { stackHead: string }) => g.stackHead === FATAL)).toMatchObject({
      level: 'fatal',
      occurrenceCount: 3,
    });
    const messages = await dash('/crash-groups?kind=message');
    expect(messages.data).toHaveLength(1);
    expect(messages.data[0]).toMatchObject({ stackHead: MESSAGE, level: 'warning', occurrenceCount: 4 });
    expect((await dash('/crash-groups?level=info')).data[0]).toMatchObject({
      stackHead: MESSAGE,
      occurrenceCount: 2,
      level: 'info',
    });
    expect(heads(await dash('/crash-groups?kind=fatal'))).toEqual([FATAL]);
    expect(heads(await dash('/crash-groups?kind=nonfatal'))).toEqual([HANDLED]);
    expect((await dashGet('/crash-groups?level=loud')).statusCode).toBe(400);
  });

  it('a group opened by a message gets no new-crash alert; one opened by a crash does', async () => {
    const jobs = async (stackHead: string) =>
      (
        await (
          await s.stores()
        ).pg.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM alert_outbox o JOIN crash_groups g ON g.id = o.group_id
       WHERE g.project_id = $1 AND g.stack_head = $2`,
          [projectId, stackHead],
        )
      ).rows[0]!.n;
    expect(await jobs(MESSAGE)).toBe(0);
    expect(await jobs(FATAL)).toBeGreaterThan(0);
  });

  it('environment filters the list and its counts, and the crash page figures', async () => {
    const prod = await dash('/crash-groups?environment=production');
    expect(prod.data).toHaveLength(1);
    expect(prod.data[0]).toMatchObject({ stackHead: FATAL, occurrenceCount: 2 });
    const staging = await dash('/crash-groups?environment=staging');
    expect(staging.data.map((g: { stackHead: string }) => g.stackHead).sort()).toEqual([FATAL, HANDLED].sort());
    expect((await dash('/crash-groups?environment=nowhere')).data).toEqual([]);

    const id = prod.data[0].id;
    const page = await dash(`/crash-groups/${id}`);
    expect(page.environments).toEqual([
      { environment: 'production', occurrences: 2 },
      { environment: 'staging', occurrences: 1 },
    ]);
    expect(page.appVersionCounts).toEqual([{ appVersion: '3.0', occurrences: 3 }]);
    const scoped = await dash(`/crash-groups/${id}?environment=staging`);
    expect(scoped.environment).toBe('staging');
    expect(scoped.appVersionCounts).toEqual([{ appVersion: '3.0', occurrences: 1 }]);
    expect(scoped.latest).toMatchObject({ environment: 'staging', level: 'fatal' });
    expect(scoped.breakdown.platforms).toEqual([{ value: 'ios', occurrences: 1, devices: 1 }]);
    expect((await dash(`/crash-groups/${id}/occurrences?environment=production`)).total).toBe(2);
  });

  it('a tag filters the list and its counts (the crash page chips link there)', async () => {
    const TAGGED = 'at taggedSite (app.js:9:9)';
    await report(TAGGED, { tags: { screen: 'cart', flow: 'a=b' } });
    await report(TAGGED, { tags: { screen: 'home' } });
    const cart = await dash(`/crash-groups?tag=${encodeURIComponent('screen=cart')}`);
    expect(cart.data).toHaveLength(1);
    expect(cart.data[0]).toMatchObject({ stackHead: TAGGED, occurrenceCount: 1 });
    expect((await dash(`/crash-groups?tag=${encodeURIComponent('flow=a=b')}`)).data).toHaveLength(1);
    expect((await dash(`/crash-groups?tag=${encodeURIComponent('screen=nowhere')}`)).data).toEqual([]);
    expect((await dashGet('/crash-groups?tag=novalue')).statusCode).toBe(400);
  });

  it('release health counts no message as a crash, nor a message group as a new crash group', async () => {
    const r = await s.app.inject({ method: 'GET', url: '/export/releases', headers: auth });
    expect(r.statusCode, r.body).toBe(200);
    const row = r.json().data.find((x: { appVersion: string }) => x.appVersion === '3.0');
    // 10 sessions, 5 crashed fatally (3 + 2 tagged); the handled error and the 4 messages crash nothing
    expect(row).toMatchObject({ sessions: 10, crashedSessions: 5, newGroups: 3 });
  });

  it('a spike rule counts crashes and errors by default, and messages when its levels say so', async () => {
    const create = async (body: object) => {
      const url = `/api/projects/${projectId}/alert-rules`;
      const r = await s.app.inject({ method: 'POST', url, headers: s.admin, payload: body });
      expect(r.statusCode, r.body).toBe(201);
      return r.json();
    };
    const crashes = await create({ name: 'crashes', kind: 'spike', threshold: 4, windowMinutes: 60, emails: [] });
    expect(crashes.levels).toBeNull();
    // 3 fatal occurrences of one group, 4 messages of another: the default rule does not fire
    expect(await s.worker!.rules!.evaluate()).toBe(0);
    const messages = await create({
      name: 'messages',
      kind: 'spike',
      threshold: 4,
      windowMinutes: 60,
      emails: [],
      levels: ['warning', 'info'],
    });
    expect(messages.levels).toEqual(['warning', 'info']);
    expect(await s.worker!.rules!.evaluate()).toBe(1);
    const patched = await s.app.inject({
      method: 'PATCH',
      url: `/api/projects/${projectId}/alert-rules/${messages.id}`,
      headers: s.admin,
      payload: { levels: null },
    });
    expect(patched.json().levels).toBeNull();
    const bad = await s.app.inject({
      method: 'POST',
      url: `/api/projects/${projectId}/alert-rules`,
      headers: s.admin,
      payload: { name: 'x', kind: 'spike', threshold: 1, levels: ['loud'] },
    });
    expect(bad.statusCode).toBe(422);
  });
});

describe('release health by environment', () => {
  it("sessions carry an optional environment; release health filters on it; a crash takes its session's", async () => {
    const start = async (environment: unknown) => {
      const st = sessionStart({ startedAt: NOW - 600_000, ...(environment === undefined ? {} : { environment }) });
      st.device.appVersion = '9.0';
      expect((await ingest('/ingest/session', st)).statusCode).toBe(201);
      return st.sessionId;
    };
    const prod = [await start('production'), await start('production'), await start('production')];
    await start('staging');
    await start('bad env!'); // ignored: the session is kept, without an environment
    const crashed = prod[0]!;
    const c = crash(crashed, { stackTrace: 'at envSite (e.js:1:1)', timestamp: NOW - 1000 });
    const r = await ingest('/ingest/crash', c);

    expect(r.statusCode).toBe(201);
    const row = async (q: string) => {
      const x = await s.app.inject({ method: 'GET', url: `/export/releases${q}`, headers: auth });
      expect(x.statusCode, x.body).toBe(200);
      return x.json().data.find((d: { appVersion: string }) => d.appVersion === '9.0');
    };
    expect(await row('')).toMatchObject({ sessions: 5, crashedSessions: 1 });
    expect(await row('?environment=production')).toMatchObject({
      sessions: 3,
      crashedSessions: 1,
      crashFreeSessions: 66.67,
    });
    expect(await row('?environment=staging')).toMatchObject({ sessions: 1, crashedSessions: 0 });
    expect(await row('?environment=nowhere')).toBeUndefined();
    const page = await dash('/releases?environment=production');
    expect(page.environment).toBe('production');
    expect(page.data.find((d: { appVersion: string }) => d.appVersion === '9.0')).toMatchObject({ sessions: 3 });
    const occ = await s.app.inject({
      method: 'GET',
      url: '/export/crash-occurrences?environment=production',
      headers: auth,
    });

    expect(occ.json().data.map((o: { sessionId: string }) => o.sessionId)).toContain(crashed);
  });
});
