// The SDK against the real service (embedded stores, or the machine's Postgres/Redis when
// DATABASE_URL/REDIS_URL are set), directly and through a proxy that fails in scripted ways.
// What the stores hold must equal what the app tracked: nothing missing, nothing twice.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlightrecClient, type FlightrecError, type FlightrecOptions } from '../src/index.ts';
import { startTestServer, type TestServer } from '../../test/helpers/server.ts';
import { startFaultServer, type FaultServer } from './helpers/faultServer.ts';

let s: TestServer;
let base: string;
let appApi: FaultServer;

beforeAll(async () => {
  s = await startTestServer();
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`;
  appApi = await startFaultServer();
  appApi.always('/api/missing', { status: 404 });
});
afterAll(async () => {
  await appApi?.close();
  await s?.close();
});

const device = {
  platform: 'android',
  osVersion: '14',
  model: 'Pixel 8',
  brand: 'Google',
  appVersion: '2.3.1',
  appBuildNumber: '231',
  locale: 'de-DE',
  timezone: 'Europe/Berlin',
  screenWidth: 412,
  screenHeight: 915,
  networkType: 'cellular',
} as const;

interface ExpectedEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}
interface ExpectedRequest {
  method: string;
  url: string;
  status_code: number | null;
  error: string | null;
}
interface ExpectedSession {
  userId: string | null;
  status: 'completed' | 'crashed';
  hasNetworkErrors: boolean;
  events: ExpectedEvent[];
  network: ExpectedRequest[];
}

/** The app's own account of what it tracked, kept next to the SDK calls. */
class Tracked {
  sessions = new Map<string, ExpectedSession>();
  crashes: { message: string; isFatal: boolean; handled: boolean }[] = [];
  private current!: ExpectedSession;
  constructor(
    readonly c: FlightrecClient,
    readonly fetchImpl: typeof fetch,
  ) {}

  start(userId?: string) {
    const id = this.c.startSession(userId === undefined ? {} : { userId });
    this.current = { userId: userId ?? null, status: 'completed', hasNetworkErrors: false, events: [], network: [] };
    this.sessions.set(id, this.current);
    return id;
  }
  private push(seq: number | undefined, type: string, data: Record<string, unknown>) {
    expect(seq).toBe(this.current.events.length);
    this.current.events.push({ seq: seq!, type, data });
  }
  navigate(to: string) {
    const from = this.current.events.filter((e) => e.type === 'navigate').at(-1)?.data.to ?? null;
    this.push(this.c.trackNavigate(to), 'navigate', { from, to });
  }
  tap(x: number, y: number, target: string) {
    this.push(this.c.trackTap({ x, y, target }), 'tap', { x, y, target });
  }
  custom(name: string, properties: Record<string, unknown>) {
    this.push(this.c.trackCustom(name, properties), 'custom', { name, properties });
  }
  networkEvent(method: string, url: string, statusCode: number | undefined, duration: number, error: string | null) {
    this.push(this.c.trackNetwork({ method, url, statusCode, duration, error }), 'network', {
      method,
      url,
      statusCode: statusCode ?? null,
      duration,
      error,
    });
    this.current.network.push({ method, url, status_code: statusCode ?? null, error });
    if ((statusCode ?? 0) >= 400 || error) this.current.hasNetworkErrors = true;
  }
  async call(method: string, url: string, body?: string) {
    const r = await this.fetchImpl(url, { method, body });
    await r.text();
    this.current.network.push({ method, url, status_code: r.status, error: null });
    if (r.status >= 400) this.current.hasNetworkErrors = true;
  }
  manualRequest(i: number) {
    const url = `https://cdn.example.com/img/${i}.png`;
    this.c.recordRequest({
      method: 'GET',
      url,
      statusCode: 200,
      duration: i % 50,
      responseSize: 1000 + i,
      error: null,
      timestamp: Date.now(),
    });
    this.current.network.push({ method: 'GET', url, status_code: 200, error: null });
  }
  crash(err: Error, isFatal: boolean, handled: boolean) {
    this.crashes.push({ message: `${err.name}: ${err.message}`, isFatal, handled });
    if (isFatal) this.current.status = 'crashed';
    return this.c.reportCrash(err, { isFatal, handled });
  }
}

// The same five top stack lines on every call, so the service puts these crashes in one group.
function priceOf(cart: { price?: number }) {
  if (cart.price === undefined) throw new TypeError('price is undefined');
  return cart.price;
}
function total(cart: { price?: number }) {
  return priceOf(cart) * 2;
}
function checkoutTotal(cart: { price?: number }) {
  return total(cart) + 1;
}
function tryCheckout(t: Tracked): Promise<void> | undefined {
  try {
    checkoutTotal({});
  } catch (e) {
    return t.crash(e as Error, false, true);
  }
  return undefined;
}

/** An app's life: three sessions with navigation, taps, custom events, requests and crashes. */
async function runApp(endpoint: string, apiKey: string, extra: Partial<FlightrecOptions> = {}) {
  const errors: FlightrecError[] = [];
  let wrapped: typeof fetch = fetch;
  const c = new FlightrecClient({
    apiKey,
    endpoint,
    device,
    captureCrashes: false,
    onError: (e) => errors.push(e),
    fetch: (u, i) => wrapped(u, i),
    ...extra,
  });
  wrapped = c.wrapFetch(fetch);
  const t = new Tracked(c, wrapped);

  t.start('alice');
  t.navigate('/home');
  t.navigate('/product/1');
  t.tap(120.5, 640, 'add-to-cart');
  t.custom('add_to_cart', { sku: 'A1', qty: 2, tags: ['x'] });
  t.networkEvent('GET', 'https://api.example.com/recs', 200, 84, null);
  await t.call('POST', `${appApi.url}/api/cart`, JSON.stringify({ sku: 'A1' }));
  await t.call('GET', `${appApi.url}/api/missing`);
  t.navigate('/checkout');
  await tryCheckout(t);
  await c.endSession();

  t.start('bob');
  for (let i = 0; i < 1234; i++) t.custom('scroll', { i });
  for (let i = 0; i < 450; i++) t.manualRequest(i);
  t.networkEvent('POST', 'https://api.example.com/pay', undefined, 30_000, 'timeout');
  await t.crash(new RangeError('stack blew up'), true, false);
  await c.endSession();

  t.start();
  t.navigate('/home');
  await tryCheckout(t);
  // Whatever ran out of retries is tried again by flush(); the app then quits.
  const deadline = Date.now() + 60_000;
  while (c.stats().queuedBatches > 0 && Date.now() < deadline) await c.flush();
  await c.shutdown();
  return { t, errors, stats: c.stats() };
}

async function storedMatchesTracked(projectId: string, t: Tracked) {
  const p = { p: projectId };
  const events = await (await s.stores()).ch.query<{
    session_id: string;
    sequence_number: number;
    type: string;
    data: string;
  }>(
    'SELECT session_id, sequence_number, type, data FROM events FINAL WHERE project_id = {p:String} ORDER BY session_id, sequence_number',
    p,
  );
  const network = await (await s.stores()).ch.query<{ session_id: string } & ExpectedRequest>(
    'SELECT session_id, method, url, status_code, error FROM network_logs FINAL WHERE project_id = {p:String}',
    p,
  );
  const [{ c: eventCount }] = (await (
    await s.stores()
  ).ch.query<{ c: number }>('SELECT count() c FROM events FINAL WHERE project_id = {p:String}', p)) as [{ c: number }];
  const sessions = await (await s.stores()).pg.query<{
    id: string;
    user_id: string | null;
    status: string;
    started_at: number;
    ended_at: number | null;
    has_network_errors: boolean;
    has_crash: boolean;
    platform: string;
    sdk_version: string;
  }>(
    'SELECT id, user_id, status, started_at, ended_at, has_network_errors, has_crash, platform, sdk_version FROM sessions WHERE project_id = $1',
    [projectId],
  );
  // A group's identity and first occurrence are in Postgres, its occurrences in ClickHouse.
  const identities = await (await s.stores()).pg.query<{
    group_key: string;
    message: string;
    is_fatal: boolean;
    handled: boolean;
  }>('SELECT group_key, message, is_fatal, handled FROM crash_groups WHERE project_id = $1 ORDER BY message', [
    projectId,
  ]);
  const counts = new Map(
    (
      await (
        await s.stores()
      ).ch.query<{ k: string; n: number }>(
        'SELECT group_key AS k, uniqExact(id) AS n FROM crash_occurrences WHERE project_id = {p:String} GROUP BY group_key',
        p,
      )
    ).map((r) => [r.k, Number(r.n)]),
  );
  const groups = {
    rows: identities.rows.map((g) => ({
      message: g.message,
      occurrence_count: counts.get(g.group_key) ?? 0,
      is_fatal: g.is_fatal,
      handled: g.handled,
    })),
  };

  const expectedEvents = [...t.sessions].flatMap(([sid, x]) =>
    x.events.map((e) => ({ session_id: sid, sequence_number: e.seq, type: e.type, data: e.data })),
  );
  const sortKey = (r: { session_id: string; sequence_number: number }) =>
    `${r.session_id}:${String(r.sequence_number).padStart(6, '0')}`;
  expect(
    events.map((e) => ({ ...e, data: JSON.parse(e.data) })).sort((a, b) => sortKey(a).localeCompare(sortKey(b))),
  ).toEqual(expectedEvents.sort((a, b) => sortKey(a).localeCompare(sortKey(b))));
  expect(eventCount).toBe(expectedEvents.length);
  expect(eventCount).toBe(6 + 1235 + 1);

  const canon = (r: { session_id: string } & ExpectedRequest) =>
    JSON.stringify([r.session_id, r.method, r.url, r.status_code, r.error]);
  expect(network.map(canon).sort()).toEqual(
    [...t.sessions].flatMap(([sid, x]) => x.network.map((n) => canon({ session_id: sid, ...n }))).sort(),
  );

  expect(
    sessions.rows
      .map((r) => ({
        id: r.id,
        userId: r.user_id,
        status: r.status,
        hasNetworkErrors: r.has_network_errors,
        ended: r.ended_at !== null && r.ended_at >= r.started_at,
        platform: r.platform,
        sdk: r.sdk_version,
      }))
      .sort((a, b) => a.id.localeCompare(b.id)),
  ).toEqual(
    [...t.sessions]
      .map(([id, x]) => ({
        id,
        userId: x.userId,
        status: x.status,
        hasNetworkErrors: x.hasNetworkErrors,
        ended: true,
        platform: 'android',
        sdk: '0.1.0',
      }))
      .sort((a, b) => a.id.localeCompare(b.id)),
  );

  const expectedGroups = new Map<
    string,
    { message: string; occurrence_count: number; is_fatal: boolean; handled: boolean }
  >();
  for (const c of t.crashes) {
    const g = expectedGroups.get(c.message);
    if (g) g.occurrence_count++;
    else
      expectedGroups.set(c.message, {
        message: c.message,
        occurrence_count: 1,
        is_fatal: c.isFatal,
        handled: c.handled,
      });
  }
  expect(groups.rows).toEqual([...expectedGroups.values()].sort((a, b) => a.message.localeCompare(b.message)));
  const [occ] = await (await s.stores()).ch.query<{ c: number }>(
    'SELECT count() c FROM crash_occurrences FINAL WHERE project_id = {p:String}',
    p,
  );
  expect(Number(occ!.c)).toBe(t.crashes.length);
}

type Fault = '500-before' | '500-after' | '429' | 'reset-after' | '503-before';

/**
 * A proxy in front of the service that fails requests by script: per path, the nth request
 * gets the listed fault. "after" faults forward the request first, so the service has
 * committed it and only the answer is lost: the retry must not create duplicates.
 */
async function startFaultProxy(target: string, plan: Record<string, Record<number, Fault>>) {
  const seen = new Map<string, number>();
  const log: { path: string; body: string; fault?: Fault; status: number }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const path = req.url ?? '/';
      const raw = Buffer.concat(chunks);
      const gzipped = req.headers['content-encoding'] === 'gzip';
      const body = (gzipped ? zlib.gunzipSync(raw) : raw).toString('utf8');
      const n = (seen.get(path) ?? 0) + 1;
      seen.set(path, n);
      const fault = plan[path]?.[n];
      const forward = () =>
        fetch(target + path, {
          method: req.method,
          body: raw,
          headers: {
            authorization: String(req.headers.authorization),
            'content-type': 'application/json',
            ...(gzipped ? { 'content-encoding': 'gzip' } : {}),
          },
        }).then(async (r) => ({ status: r.status, text: await r.text() }));
      const answer = (status: number, text: string, headers: Record<string, string> = {}) => {
        log.push({ path, body, fault, status });
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(text);
      };
      if (fault === '500-before' || fault === '503-before')
        return answer(Number(fault.slice(0, 3)), '{"error":"injected"}');
      if (fault === '429') return answer(429, '{"error":"Too many requests"}', { 'retry-after': '1' });
      const r = await forward();
      if (fault === '500-after') return answer(500, '{"error":"injected after commit"}');
      if (fault === 'reset-after') {
        log.push({ path, body, fault, status: 0 });
        return req.socket.destroy();
      }
      answer(r.status, r.text);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('SDK against the real service', () => {
  it('stores exactly what an app tracked', async () => {
    const { projectId, apiKey } = await s.createProject('sdk direct');
    const { t, errors, stats } = await runApp(base, apiKey);
    expect(errors).toEqual([]);
    expect(stats).toMatchObject({ queuedBatches: 0, dropped: 0, rejected: 0 });
    await storedMatchesTracked(projectId, t);
  });

  it('stores exactly what an app tracked when the service fails in scripted ways', async () => {
    const { projectId, apiKey } = await s.createProject('sdk faults');
    const plan: Record<string, Record<number, Fault>> = {
      '/ingest/session': { 1: '500-before', 2: '500-after', 5: 'reset-after' },
      '/ingest/events': {
        1: '500-after',
        3: '429',
        5: 'reset-after',
        7: '503-before',
        8: '503-before',
        9: '503-before',
        10: '503-before',
      },
      '/ingest/network': { 1: '500-after', 3: '500-before' },
      '/ingest/crash': { 1: '500-after', 2: '500-after', 4: 'reset-after' },
      '/ingest/session/end': { 1: '500-before', 3: '500-after' },
    };
    const proxy = await startFaultProxy(base, plan);
    try {
      const { t, errors, stats } = await runApp(proxy.url, apiKey, {
        retryDelaysMs: [20, 40, 80],
        flushIntervalMs: 300,
      });
      // the four 503s in a row exhausted one batch's retries once; it was kept and sent later
      expect(errors.map((e) => e.kind)).toEqual(['retry-exhausted']);
      expect(stats).toMatchObject({ queuedBatches: 0, dropped: 0, rejected: 0 });
      await storedMatchesTracked(projectId, t);

      // every faulted request was followed by a retry of the same bytes (other batches of the
      // session may go in between: data batches of a session go side by side)
      const faulted = proxy.log.filter((l) => l.fault);
      expect(faulted).toHaveLength(Object.values(plan).reduce((n, byPath) => n + Object.keys(byPath).length, 0));
      for (const f of faulted) {
        const i = proxy.log.indexOf(f);
        expect(proxy.log.slice(i + 1).some((l) => l.path === f.path && l.body === f.body)).toBe(true);
      }
    } finally {
      await proxy.close();
    }
  });

  it('keeps every good event when the app passes values the service would refuse (fractional screen, NaN, BigInt, cycles)', async () => {
    const { projectId, apiKey } = await s.createProject('sdk bad values');
    const errors: FlightrecError[] = [];
    const c = new FlightrecClient({
      apiKey,
      endpoint: base,
      captureCrashes: false,
      onError: (e) => errors.push(e),
      device: { ...device, screenWidth: 411.42857142857144, screenHeight: 914.2857142857143 },
    });
    const sid = c.startSession();
    const cyclic: Record<string, unknown> = { n: 1 };
    cyclic.me = cyclic;
    for (let i = 0; i < 100; i++) c.trackCustom('scroll', { i });
    c.trackTap({ x: Number.NaN, y: 10, target: 'ghost' });
    c.trackCustom('order_placed', { orderId: 1n, cart: cyclic, ratio: Infinity });
    for (let i = 100; i < 200; i++) c.trackCustom('scroll', { i });
    await c.shutdown();
    expect(errors.map((e) => e.kind)).toEqual(['invalid', 'invalid']);
    const rows = await (await s.stores()).ch.query<{ sequence_number: number; data: string }>(
      'SELECT sequence_number, data FROM events FINAL WHERE project_id = {p:String} ORDER BY sequence_number',
      { p: projectId },
    );
    expect(rows.map((r) => r.sequence_number)).toEqual(Array.from({ length: 201 }, (_, i) => i));
    expect(JSON.parse(rows[100]!.data)).toEqual({
      name: 'order_placed',
      properties: { orderId: '1', cart: { n: 1, me: '[Circular]' } },
    });
    const session = await (await s.stores()).pg.query<{ id: string; status: string; screen_width: number }>(
      'SELECT id, status, screen_width FROM sessions WHERE project_id = $1',
      [projectId],
    );
    expect(session.rows).toEqual([{ id: sid, status: 'completed', screen_width: 411 }]);
  });

  it('stores 500 events of ~11 KB each: split into bodies the service accepts', async () => {
    const { projectId, apiKey } = await s.createProject('sdk big events');
    const errors: FlightrecError[] = [];
    for (const compress of [false, true]) {
      const c = new FlightrecClient({
        apiKey,
        endpoint: base,
        device,
        captureCrashes: false,
        compress,
        onError: (e) => errors.push(e),
      });
      c.startSession();
      const blob = 'lorem ipsum '.repeat(900);
      for (let i = 0; i < 500; i++) c.trackCustom('log', { i, blob });
      await c.shutdown();
      expect(c.stats()).toMatchObject({ rejected: 0, queuedBatches: 0 });
    }
    expect(errors).toEqual([]);
    const [{ n }] = (await (
      await s.stores()
    ).ch.query<{ n: number }>('SELECT count() n FROM events FINAL WHERE project_id = {p:String}', {
      p: projectId,
    })) as [{ n: number }];
    expect(Number(n)).toBe(1000);
  });
});
