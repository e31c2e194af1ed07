import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';
import { sessionStart, T0 } from '../helpers/payloads.ts';
import { dashboardProject, signup, type Account } from '../helpers/accounts.ts';

// Suspects and the trail before the crash over the real stores and HTTP stack: an OS version
// planted in most of a group's occurrences ranks first, a value every session shares does not
// rank at all, and a failing request right before the crash leads the most common trail.
let s: TestServer;
let a: Account;
let projectId: string;
let auth: { authorization: string };
let groupId: string;
const crashing: string[] = [];

const STACK =
  "TypeError: Cannot read properties of undefined (reading 'total')\n" +
  '    at pay (app.js:3:9)\n    at submit (app.js:8:1)';
const OTHER = 'Error: unrelated\n    at other (lib.js:1:1)';
const FAILED = 'POST api.shop.example/orders/<uuid> → 503';

async function post(url: string, payload: object) {
  const r = await s.app.inject({ method: 'POST', url, headers: auth, payload });
  expect(r.statusCode, r.body).toBe(201);
}
const dash = async (url: string, status = 200) => {
  const r = await s.app.inject({
    method: 'GET',
    url: `/api/dashboard/projects/${projectId}${url}`,
    headers: a.headers,
  });
  expect(r.statusCode, r.body).toBe(status);
  return r.json();
};

beforeAll(async () => {
  s = await startTestServer({ RUN_WORKER: 'false' });
  a = await signup(s);
  ({ projectId, auth } = await dashboardProject(s, a));
  // 80 sessions over two days: Android 13 (60) and Android 14 (20), all on wifi, one release.
  const sessions: { id: string; os: string; at: number }[] = [];
  for (let i = 0; i < 80; i++) {
    const st = sessionStart({ userId: `u${i}`, startedAt: T0 + (i % 2) * 86_400_000 + i * 60_000 });
    const os = i < 60 ? '13' : '14';
    st.device = {
      ...st.device,
      platform: 'android',
      osVersion: os,
      brand: 'Google',
      model: 'Pixel 8',
      appVersion: '3.0.0',
      networkType: 'wifi',
    };
    await post('/ingest/session', st);
    sessions.push({ id: st.sessionId, os, at: st.startedAt });
  }
  // The group: 12 of its 15 occurrences on Android 14 (a quarter of the sessions).
  const onOs = (os: string, n: number) => sessions.filter((x) => x.os === os).slice(0, n);
  const hit = [...onOs('14', 12), ...onOs('13', 3)];
  for (const [n, x] of hit.entries()) {
    const crashAt = x.at + 120_000;
    const sid = x.id;
    crashing.push(sid);
    const ev = (seq: number, dt: number, e: object) => ({
      sessionId: sid,
      sequenceNumber: seq,
      timestamp: crashAt - dt,
      ...e,
    });
    const events: object[] = [
      ev(0, 90_000, { type: 'navigate', from: null, to: '/onboarding' }), // outside the 30 s window
      ev(1, 20_000, { type: 'navigate', from: '/onboarding', to: '/home' }),
      ev(2, 15_000, { type: 'tap', x: 1, y: 2, target: 'buy' }),
      ev(3, 14_000, { type: 'tap', x: 1, y: 2, target: 'buy' }), // a repeat: collapsed
      ev(4, 10_000, { type: 'navigate', from: '/home', to: `/cart/${1000 + n}` }),
      ev(5, -5_000, { type: 'custom', name: 'after_the_crash', properties: {} }), // after it: not part of the trail
    ];
    if (n < 10) {
      // the common failing request, sent as a network event by half and as a request log by the other half
      const url = `https://api.shop.example/orders/${randomUUID()}?token=${n}`;
      const failing = { method: 'POST', url, statusCode: 503, duration: 40 };
      if (n % 2) events.push(ev(6, 2_000, { type: 'network', ...failing, error: null }));
      else {
        await post('/ingest/network', {
          sessionId: sid,
          requests: [{ id: randomUUID(), ...failing, timestamp: crashAt - 2_000 }],
        });
      }
    } else {
      events.push(ev(6, 3_000, { type: 'custom', name: 'checkout_failed', properties: {} }));
    }
    // a request that succeeded is not a step
    events.push(
      ev(7, 1_000, {
        type: 'network',
        method: 'GET',
        url: 'https://api.shop.example/ok',
        statusCode: 200,
        duration: 5,
        error: null,
      }),
    );
    await post('/ingest/events', { sessionId: sid, events });
    await post('/ingest/crash', {
      sessionId: sid,
      timestamp: crashAt,
      message: 'TypeError',
      stackTrace: STACK,
      isFatal: true,
      handled: false,
      environment: 'production',
      tags: { checkout: n < 11 ? 'v2' : 'v1' },
    });
  }
  // other groups' reports, in production on the old checkout: the baseline of environment and tags
  for (const x of sessions.slice(20, 40)) {
    await post('/ingest/crash', {
      sessionId: x.id,
      timestamp: x.at + 1000,
      message: 'Error',
      stackTrace: OTHER,
      isFatal: false,
      handled: true,
      environment: 'production',
      tags: { checkout: 'v1' },
    });
  }
  await s.settled();
  const groups = (await dash('/crash-groups?kind=fatal')).data;
  expect(groups).toHaveLength(1);
  groupId = groups[0].id;
});
afterAll(async () => {
  await s?.close();
});

describe('suspects', () => {
  it('ranks the planted OS version first, with its shares and a lift bound over 1; common ones stay out', async () => {
    const r = await dash(`/crash-groups/${groupId}/suspects`);
    expect(r.occurrences).toBe(15);
    expect(r.period).toMatchObject({ days: 30, from: '2026-01-01', to: '2026-01-02', daysWithOccurrences: 2 });
    expect(r.baseline).toContain('sessions');
    expect(r.suspects[0]).toMatchObject({
      dimension: 'osVersion',
      value: 'android 14',
      groupCount: 12,
      groupShare: 0.8,
      baselineCount: 20,
      baselineShare: 0.25,
      baselineUnit: 'sessions',
    });
    expect(r.suspects[0].lift).toBeCloseTo(3.2, 5);
    expect(r.suspects[0].liftLow).toBeGreaterThan(1);
    expect(r.suspects[0].liftLow).toBeLessThan(3.2);
    // every session shares these: not suspects
    const values = r.suspects.map((x: { value: string }) => x.value);
    for (const common of ['android 13', 'wifi', '3.0.0', 'android', 'Google Pixel 8']) {
      expect(values).not.toContain(common);
    }
    const os = r.dimensions.find((d: { dimension: string }) => d.dimension === 'osVersion');
    expect(os).toEqual({ dimension: 'osVersion', occurrences: 15, baseline: 80, baselineUnit: 'sessions' });
    expect(r.dimensions.map((d: { dimension: string }) => d.dimension).sort()).toEqual([
      'deviceModel',
      'environment',
      'networkType',
      'osVersion',
      'platform',
      'release',
      'tag:checkout',
    ]);
  });

  it("compares environment and tags with the project's crash occurrences", async () => {
    const r = await dash(`/crash-groups/${groupId}/suspects`);
    const tag = r.suspects.find((x: { dimension: string }) => x.dimension === 'tag:checkout');
    // 11 of the group's 15 reports on checkout v2, which only they sent: 11 of the project's 35
    expect(tag).toMatchObject({ value: 'v2', groupCount: 11, baselineCount: 11, baselineUnit: 'occurrences' });
    expect(tag.baselineShare).toBeCloseTo(11 / 35, 9);
    expect(r.suspects.find((x: { value: string }) => x.value === 'production')).toBeUndefined();
    expect(r.dimensions.find((d: { dimension: string }) => d.dimension === 'environment')).toEqual({
      dimension: 'environment',
      occurrences: 15,
      baseline: 35,
      baselineUnit: 'occurrences',
    });
    // the planted OS version still leads: its bound is the larger
    expect(r.suspects[0].value).toBe('android 14');
  });

  it('answers the same on the management API, 404 for an unknown group and 400 for a bad period', async () => {
    const url = `/api/projects/${projectId}/crash-groups/${groupId}/suspects`;
    const m = await s.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(m.statusCode, m.body).toBe(200);
    expect(m.json().suspects[0]).toMatchObject({ dimension: 'osVersion', value: 'android 14' });
    const missing = await s.app.inject({
      method: 'GET',
      url: `/api/projects/${projectId}/crash-groups/${randomUUID()}/suspects`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(missing.statusCode).toBe(404);
    expect((await dash(`/crash-groups/${randomUUID()}/suspects`, 404)).error).toBeTruthy();
    expect((await dash(`/crash-groups/${groupId}/suspects?days=0`, 400)).error).toContain('days');
    expect((await dash(`/crash-groups/${groupId}/suspects?days=91`, 400)).error).toContain('days');
  });
});

describe('the trail before the crash', () => {
  it('leads with the failing request most crashes followed, ids collapsed, and a session that took it', async () => {
    const r = await dash(`/crash-groups/${groupId}/trail`);
    expect(r).toMatchObject({ windowSeconds: 30, steps: 5, sampleLimit: 2000, sampled: 15, withoutEvents: 0 });
    expect(r.trails[0].steps).toEqual([
      { kind: 'screen', label: '/home' },
      { kind: 'tap', label: 'buy' },
      { kind: 'screen', label: '/cart/<n>' },
      { kind: 'request', label: 'POST api.shop.example/orders/<uuid> → 503' },
    ]);
    expect(r.trails[0]).toMatchObject({ occurrences: 10 });
    expect(r.trails[0].share).toBeCloseTo(10 / 15, 9);
    expect(crashing.slice(0, 10)).toContain(r.trails[0].sessionId);
    expect(r.trails[1]).toMatchObject({ occurrences: 5 });
    expect(r.trails[1].steps.at(-1)).toEqual({ kind: 'event', label: 'checkout_failed' });
    // the session it links to is one the dashboard opens
    expect(JSON.stringify(await dash(`/sessions/${r.trails[0].sessionId}`))).toContain(r.trails[0].sessionId);
  });

  it('takes the window and the number of steps from the query, within bounds', async () => {
    const short = await dash(`/crash-groups/${groupId}/trail?window=5&steps=1`);
    expect(short.trails[0]).toMatchObject({ occurrences: 10, steps: [{ kind: 'request', label: FAILED }] });
    const two = await dash(`/crash-groups/${groupId}/trail?steps=2`);
    expect(two.trails[0].steps.map((x: { label: string }) => x.label)).toEqual(['/cart/<n>', FAILED]);
    for (const q of ['window=4', 'window=301', 'steps=0', 'steps=11', 'window=abc']) {
      expect((await dash(`/crash-groups/${groupId}/trail?${q}`, 400)).error).toBeTruthy();
    }
    const m = await s.app.inject({
      method: 'GET',
      url: `/api/projects/${projectId}/crash-groups/${groupId}/trail?window=120`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(m.statusCode, m.body).toBe(200);
    // two minutes back reach the onboarding screen too
    expect(m.json().trails[0].steps.map((x: { label: string }) => x.label)).toEqual([
      '/onboarding',
      '/home',
      'buy',
      '/cart/<n>',
      FAILED,
    ]);
  });
});

describe('OpenAPI', () => {
  it('documents both routes, on the dashboard and the management API', async () => {
    const doc = (await s.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const base of ['/api/dashboard/projects/{projectId}', '/api/projects/{projectId}']) {
      for (const r of ['suspects', 'trail']) {
        expect(Object.keys(doc.paths)).toContain(`${base}/crash-groups/{groupId}/${r}`);
      }
    }
  });
});
