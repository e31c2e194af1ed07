import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { sessionStart, T0 } from '../helpers/payloads.ts';
import { dashboardProject, signup, type Account } from '../helpers/accounts.ts';
import { deterministicSummary } from '../../src/domain/crashSummary.ts';

// The crash list and page as the dashboard reads them: fatal crashes and handled errors told
// apart (filter, sort), every platform seen, who it hit by model / OS / app version, and a
// fallback summary that does not repeat the message as the crashing frame.
let s: TestServer;
let a: Account;
let projectId: string;
let auth: { authorization: string };
beforeAll(async () => {
  s = await startTestServer({ RUN_WORKER: 'false' });
  a = await signup(s);
  ({ projectId, auth } = await dashboardProject(s, a));
});
afterAll(async () => {
  await s?.close();
});

let ts = T0 + 10_000;
async function crash(
  device: Record<string, unknown>,
  c: { stackTrace: string; message: string; isFatal: boolean; handled: boolean },
  userId = 'u1',
) {
  const st = sessionStart({ userId });
  st.device = { ...st.device, ...device };
  expect((await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: st })).statusCode).toBe(
    201,
  );
  const r = await s.app.inject({
    method: 'POST',
    url: '/ingest/crash',
    headers: auth,
    payload: { sessionId: st.sessionId, timestamp: ts++, ...c },
  });
  expect(r.statusCode).toBe(201);
}
const dash = async (url: string) => {
  const r = await s.app.inject({
    method: 'GET',
    url: `/api/dashboard/projects/${projectId}${url}`,
    headers: a.headers,
  });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
};

const NPE =
  'java.lang.NullPointerException: Attempt to invoke virtual method on a null object reference\n\tat com.shop.Cart.total(Cart.kt:12)\n\tat com.shop.CartActivity.onResume(CartActivity.kt:40)';
const HANDLED = 'Error: Payment 55 declined\n    at pay (app.js:3:9)';

describe('crash list and page', () => {
  beforeAll(async () => {
    const pixel = { platform: 'android', brand: 'Google', model: 'Pixel 8', osVersion: '14', appVersion: '2.0.0' };
    await crash(
      pixel,
      { stackTrace: NPE, message: 'java.lang.NullPointerException', isFatal: true, handled: false },
      'u1',
    );
    await crash(
      { ...pixel, osVersion: '15', appVersion: '2.1.0' },
      { stackTrace: NPE, message: 'java.lang.NullPointerException', isFatal: true, handled: false },
      'u2',
    );
    await crash(
      { platform: 'linux', brand: undefined, model: undefined, osVersion: '6.8', appVersion: '2.1.0' },
      { stackTrace: NPE, message: 'java.lang.NullPointerException', isFatal: true, handled: false },
      'u2',
    );
    for (const u of ['u1', 'u2', 'u3', 'u4']) {
      await crash(
        { platform: 'ios', appVersion: '2.1.0' },
        { stackTrace: HANDLED, message: 'Error: Payment 55 declined', isFatal: false, handled: true },
        u,
      );
    }
  });

  it('filters fatal crashes from handled errors and sorts by occurrences, users, first and last seen', async () => {
    const all = await dash('/crash-groups');
    expect(all.total).toBe(2);
    const fatal = await dash('/crash-groups?kind=fatal');
    expect(fatal.data.map((g: { isFatal: boolean }) => g.isFatal)).toEqual([true]);
    // the list names every platform the group was seen on, not only the latest
    expect(fatal.data[0].platforms).toEqual(['android', 'linux']);
    const errors = await dash('/crash-groups?kind=nonfatal');
    expect(errors.data).toMatchObject([{ isFatal: false, handled: true, occurrenceCount: 4 }]);
    expect(
      (await dash('/crash-groups?sort=occurrences')).data.map((g: { occurrenceCount: number }) => g.occurrenceCount),
    ).toEqual([4, 3]);
    expect(
      (await dash('/crash-groups?sort=users')).data.map((g: { usersAffected: number }) => g.usersAffected),
    ).toEqual([4, 2]);
    expect((await dash('/crash-groups?sort=firstSeen')).data[0].isFatal).toBe(false);
    expect((await dash('/crash-groups?sort=lastSeen')).data[0].isFatal).toBe(false);
    const bad = await s.app.inject({
      method: 'GET',
      url: `/api/dashboard/projects/${projectId}/crash-groups?sort=random`,
      headers: a.headers,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toContain('sort');
  });

  it('the page shows every platform seen, devices by model, OS and app version, and a summary that names a frame', async () => {
    const [g] = (await dash('/crash-groups?kind=fatal')).data;
    const page = await dash(`/crash-groups/${g.id}`);
    expect(page.platforms.sort()).toEqual(['android', 'linux']);
    expect(page.affectedDevices).toBe(3);
    expect(page.breakdown.models).toEqual([
      { value: 'Google Pixel 8', occurrences: 2, devices: 2 },
      { value: null, occurrences: 1, devices: 1 },
    ]);
    expect(page.breakdown.osVersions.map((r: { value: string }) => r.value).sort()).toEqual([
      'android 14',
      'android 15',
      'linux 6.8',
    ]);
    expect(page.breakdown.appVersions).toEqual([
      { value: '2.1.0', occurrences: 2, devices: 2 },
      { value: '2.0.0', occurrences: 1, devices: 1 },
    ]);
    // the summary's crashing frame is a frame, not the message line again
    expect(page.summary.text).toContain(
      'in com.shop.Cart.total(Cart.kt:12), called from com.shop.CartActivity.onResume(CartActivity.kt:40)',
    );
    expect(page.summary.text).not.toMatch(/in java\.lang\.NullPointerException/);
  });
});

describe('the fallback summary', () => {
  const ctx = {
    isFatal: true,
    handled: false,
    appVersion: null,
    appBuildNumber: null,
    platform: null,
    osVersion: null,
    deviceModel: null,
    deviceBrand: null,
  };
  it('skips message and Caused by lines; with no frame it names none', () => {
    expect(
      deterministicSummary({
        ...ctx,
        message: 'java.lang.NullPointerException',
        stackHead: 'java.lang.NullPointerException\n\tat a.B.c(B.java:1)',
      }),
    ).toBe('Fatal crash: "java.lang.NullPointerException" in a.B.c(B.java:1).');
    expect(deterministicSummary({ ...ctx, message: 'Error: x', stackHead: 'Error: x' })).toBe(
      'Fatal crash: "Error: x".',
    );
    expect(
      deterministicSummary({
        ...ctx,
        message: 'm',
        stackHead: '0   Shop  0x0000000104a8c3f4 main + 120\n1   Shop  0x0000000104a8c3f4 start + 4',
      }),
    ).toContain('in 0   Shop  0x0000000104a8c3f4 main + 120, called from');
  });
});

describe('groups made before the normalised rule', () => {
  it('keep their key: a stack with nothing volatile still lands in its old group; one with an id opens one new group, once', async () => {
    const { createHash, randomUUID } = await import('node:crypto');
    const { stackHead } = await import('../../src/domain/crashGrouping.ts');
    const oldKey = (stack: string) => createHash('sha256').update(stackHead(stack)).digest('hex');
    const stable = 'Error: cart is empty\n    at checkout (cart.js:10:5)';
    const volatile = 'Error: Order 1042 not found\n    at load (orders.js:3:9)';
    const p = await s.createProject();
    for (const stack of [stable, volatile]) {
      await (await s.stores()).pg.query(
        // made before the list's counters too (postgres/018): counted from their occurrences when listed
        `INSERT INTO crash_groups (id, project_id, group_key, message, stack_head, is_fatal, handled, first_seen_at, counted)
         VALUES ($1, $2, $3, $4, $5, true, false, $6, false)`,
        [randomUUID(), p.projectId, oldKey(stack), stack.split('\n')[0], stackHead(stack), T0],
      );
    }
    const send = async (stackTrace: string) => {
      const st = sessionStart();
      await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st });
      const r = await s.app.inject({
        method: 'POST',
        url: '/ingest/crash',
        headers: p.auth,
        payload: { sessionId: st.sessionId, message: 'm', stackTrace, isFatal: true, handled: false, timestamp: ts++ },
      });
      expect(r.statusCode).toBe(201);
    };
    await send(stable);
    await send(volatile);
    await send(volatile.replace('1042', '77'));
    const rows = (
      await (
        await s.stores()
      ).pg.query<{ group_key: string; message: string }>(
        'SELECT group_key, message FROM crash_groups WHERE project_id = $1',
        [p.projectId],
      )
    ).rows;
    expect(rows).toHaveLength(3);
    expect(rows.map((r) => r.group_key)).toContain(oldKey(stable));
    expect(rows.map((r) => r.group_key)).toContain(oldKey(volatile));
    const facts = await s.svc.crashGroups.list(p.projectId, undefined, 1, 10);
    const count = (key: string) =>
      facts.data.find((g) => rows.find((r) => r.group_key === key && r.message === g.message) !== undefined);
    expect(count(oldKey(stable))?.occurrenceCount).toBe(1);
    // the two reports of the volatile bug share the one new group
    expect(facts.data.map((g) => g.occurrenceCount).sort()).toEqual([1, 1, 2]);
  });
});
