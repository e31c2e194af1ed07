import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { crash, sessionStart } from '../helpers/payloads.ts';
import { dashboardProject, signup, type Account } from '../helpers/accounts.ts';
import { waitFor } from '../helpers/wait.ts';

// Issue 31 item 3: the dashboard's crash list filters, sorts and pages in the store (the groups'
// counters in Postgres), and searches by message, error type, function or file.
let s: TestServer;
let a: Account;
let projectId: string;
let auth: { authorization: string };
beforeAll(async () => {
  s = await startTestServer({ RATE_LIMIT_INGEST_PER_MIN: '1000000' });
  a = await signup(s);
  ({ projectId, auth } = await dashboardProject(s, a));
}, 60_000);
afterAll(async () => {
  await s?.close();
});

const ingest = (url: string, payload: object) => s.app.inject({ method: 'POST', url, headers: auth, payload });
const dashGet = (url: string) =>
  s.app.inject({ method: 'GET', url: `/api/dashboard/projects/${projectId}${url}`, headers: a.headers });
const dash = async (url: string) => {
  const r = await dashGet(url);
  expect(r.statusCode, r.body).toBe(200);
  return r.json() as { data: { message: string; occurrenceCount: number }[]; total: number; page: number };
};
const messages = (r: { data: { message: string }[] }) => r.data.map((g) => g.message);

const NOW = Date.now();
let ts = NOW - 120_000;
async function report(message: string, stackTrace: string, over: Record<string, unknown> = {}) {
  const st = sessionStart({ startedAt: NOW - 600_000, userId: `user-${ts}` });
  expect((await ingest('/ingest/session', st)).statusCode).toBe(201);
  const r = await ingest('/ingest/crash', crash(st.sessionId, { message, stackTrace, timestamp: ts++, ...over }));
  expect(r.statusCode, r.body).toBe(201);
}

const CART = 'TypeError: Cannot read properties of undefined';
const GRID = 'RangeError: Invalid array length';
const SALE = 'Error: 50% off_sale expired';

describe('the crash list in the store', () => {
  beforeAll(async () => {
    // CART three times, SALE twice, GRID once (handled, not fatal); GRID is the latest seen.
    for (let i = 0; i < 3; i++) await report(CART, 'at renderCart (src/cart.ts:10:5)\nat main (src/index.ts:1:1)');
    for (let i = 0; i < 2; i++) await report(SALE, 'at applyCoupon (lib/coupon.js:7:1)\nat main (src/index.ts:1:1)');
    await report(GRID, 'at buildGrid (src/grid.ts:4:2)\nat main (src/index.ts:1:1)', {
      isFatal: false,
      handled: true,
    });
    await waitFor('every occurrence listed', async () => {
      const r = await dash('/crash-groups?sort=occurrences');
      return r.data.map((g) => g.occurrenceCount).join() === '3,2,1' ? r : undefined;
    });
  });

  it('sorts by each order and pages with the true total', async () => {
    expect(messages(await dash('/crash-groups'))).toEqual([GRID, SALE, CART]);
    expect(messages(await dash('/crash-groups?sort=occurrences'))).toEqual([CART, SALE, GRID]);
    expect(messages(await dash('/crash-groups?sort=firstSeen'))).toEqual([GRID, SALE, CART]);
    const second = await dash('/crash-groups?sort=occurrences&limit=1&page=2');
    expect(messages(second)).toEqual([SALE]);
    expect(second).toMatchObject({ total: 3, totalCapped: false });
    const past = await dash('/crash-groups?limit=2&page=3');
    expect(past.data).toEqual([]);
    expect(past.total).toBe(3);
  });

  it('filters by kind and status', async () => {
    expect(messages(await dash('/crash-groups?kind=fatal&sort=occurrences'))).toEqual([CART, SALE]);
    expect(messages(await dash('/crash-groups?kind=nonfatal'))).toEqual([GRID]);
    expect((await dash('/crash-groups?status=resolved')).total).toBe(0);
    expect((await dash('/crash-groups?kind=message')).total).toBe(0);
  });

  it('searches the message, the error type, a function or a file, any case, % and _ taken literally', async () => {
    expect(messages(await dash('/crash-groups?q=typeerror'))).toEqual([CART]);
    expect(messages(await dash('/crash-groups?q=Invalid%20array'))).toEqual([GRID]);
    expect(messages(await dash('/crash-groups?q=applyCoupon'))).toEqual([SALE]);
    expect(messages(await dash('/crash-groups?q=src%2Fgrid.ts'))).toEqual([GRID]);
    expect(messages(await dash('/crash-groups?q=%25'))).toEqual([SALE]);
    expect(messages(await dash('/crash-groups?q=off_sale'))).toEqual([SALE]);
    expect(messages(await dash('/crash-groups?q=f_s'))).toEqual([SALE]);
    const none = await dash('/crash-groups?q=nothing%20like%20this');
    expect(none).toMatchObject({ data: [], total: 0 });
    // with the filters, and on the lists still cut after reading (an environment's counts)
    expect(messages(await dash('/crash-groups?q=main&kind=fatal&sort=occurrences'))).toEqual([CART, SALE]);
    expect(messages(await dash('/crash-groups?q=coupon&environment='))).toEqual([SALE]);
  });

  it('refuses pages deeper than the bounded offset and a search too long, changing nothing', async () => {
    const deep = await dashGet('/crash-groups?limit=100&page=101');
    expect(deep.statusCode).toBe(400);
    expect(deep.json()).toHaveProperty('error');
    const long = await dashGet(`/crash-groups?q=${'x'.repeat(201)}`);
    expect(long.statusCode).toBe(400);
    expect(long.json()).toHaveProperty('error');
  });
});
