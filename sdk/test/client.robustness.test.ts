// The SDK against a scripted fault server, with fake timers, for what an app-shaped run through a
// fault-injecting proxy found: values that crashed the app or lost batches, byte-size limits,
// hard kills, fetch records, and what Sentry/PostHog users expect (crash capture, beforeSend,
// sampling, lifecycle, gzip, XHR, one throttled session not stalling the others).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import * as sdk from '../src/index.ts';
import { memoryPersistence, type Batch, type CrashReport, type FlightrecOptions, type SdkEvent } from '../src/index.ts';
import { settle } from './helpers/drive.ts';
import { realPause, startFaultServer, until } from './helpers/faultServer.ts';
import {
  T0,
  bodyOf,
  client,
  errors,
  eventsSent,
  range,
  requestsSent,
  retries,
  seqs,
  srv,
  useFaultServer,
} from './helpers/harness.ts';
import { NodeXhr } from './helpers/nodeXhr.ts';
import { freePort } from '../../scripts/freePort.ts';

const device = { platform: 'android', osVersion: '14', model: 'Pixel 8' } as const;

useFaultServer(device);

describe('finding 1: a value JSON cannot hold never throws at the app', () => {
  it('BigInt, cycles, functions and throwing getters are made safe at track time; every call keeps working', async () => {
    const c = client();
    const sid = c.startSession();
    const cyclic: Record<string, unknown> = { name: 'cart' };
    cyclic.self = cyclic;
    const shared = { v: 1 };
    const tricky = Object.defineProperty({ ok: 1 }, 'boom', {
      enumerable: true,
      get() {
        throw new Error('getter');
      },
    });
    expect(
      c.trackCustom('order_placed', {
        orderId: 1n,
        cart: cyclic,
        a: shared,
        b: shared,
        fn: () => 1,
        at: new Date(T0),
        tricky,
      }),
    ).toBe(0);
    expect(c.trackCustom('after')).toBe(1);
    // the 5 s tick seals the buffer: it threw a TypeError from the timer before
    await vi.advanceTimersByTimeAsync(5000);
    await srv.waitFor(1, '/ingest/events');
    expect(eventsSent()[0]).toEqual({
      type: 'custom',
      name: 'order_placed',
      sessionId: sid,
      timestamp: T0,
      sequenceNumber: 0,
      properties: {
        orderId: '1',
        cart: { name: 'cart', self: '[Circular]' },
        a: { v: 1 },
        b: { v: 1 },
        at: new Date(T0).toISOString(),
        tricky: { ok: 1 },
      },
    });
    expect(seqs(eventsSent())).toEqual([0, 1]);
    expect(errors.filter((e) => e.kind !== 'invalid')).toEqual([]);

    c.trackCustom('again', { big: 2n ** 70n });
    await c.flush();
    await c.endSession();
    expect(c.startSession()).toMatch(/^[0-9a-f-]{36}$/);
    await c.shutdown();
    expect(eventsSent().map((e) => (e as { properties?: unknown }).properties)).toContainEqual({
      big: '1180591620717411303424',
    });
  });

  it('a plain Node app with a BigInt property is not killed by the SDK: the uncaught error it dies of is reported, then Node exits with code 1', async () => {
    vi.useRealTimers();
    const r = await runCrashApp({});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('TypeError: checkout exploded');
    const crash = bodyOf<CrashReport>(srv.on('/ingest/crash')[0]!);
    expect(crash).toMatchObject({ message: 'TypeError: checkout exploded', isFatal: true, handled: false });
    expect(crash.stackTrace).toMatch(/^TypeError: checkout exploded\n\s+at /);
    expect(eventsSent().map((e) => (e as { properties?: unknown }).properties)).toEqual([{ orderId: '1' }]);
    // the events reached the service before the crash
    expect(srv.received.map((x) => x.path).slice(0, 3)).toEqual(['/ingest/session', '/ingest/events', '/ingest/crash']);
  });

  it('when the app has its own uncaughtException handler, the crash is still reported and the app decides the exit', async () => {
    vi.useRealTimers();
    const r = await runCrashApp({ MODE: 'own-handler' });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('app handler saw checkout exploded');
    expect(srv.on('/ingest/crash')).toHaveLength(1);
  });
});

async function runCrashApp(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'helpers/crashApp.ts')], {
    env: { ...process.env, ENDPOINT: srv.url, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d;
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  return { code, stdout, stderr };
}

describe('finding 2: one bad value is dropped alone', () => {
  it('a NaN tap is left out and reported; the other 200 events of its batch are sent', async () => {
    const c = client();
    c.startSession();
    for (let i = 0; i < 100; i++) c.trackCustom('e', { i });
    expect(c.trackTap({ x: Number.NaN, y: 3 })).toBeUndefined();
    expect(c.trackTap({ x: 1, y: Infinity, target: 'x' })).toBeUndefined();
    for (let i = 100; i < 201; i++) c.trackCustom('e', { i, ratio: i === 150 ? Number.NaN : 0.5 });
    await c.flush();
    expect(seqs(eventsSent())).toEqual(range(0, 201));
    expect(srv.on('/ingest/events')).toHaveLength(1);
    // a non-finite property value is left out of its event, which is kept
    expect((eventsSent()[150] as { properties: unknown }).properties).toEqual({ i: 150 });
    expect(errors.map((e) => e.kind === 'invalid' && [e.dropped, e.message])).toEqual([
      [true, 'tap event dropped'],
      [true, 'tap event dropped'],
      [false, 'custom event: values left out'],
    ]);
    expect(c.stats()).toMatchObject({ invalid: 2, rejected: 0 });
  });

  it('a fractional screen size is rounded and an unknown platform left out, so the session start is accepted', async () => {
    const c = client({
      device: {
        platform: 'web' as never,
        screenWidth: 411.43,
        screenHeight: 914.29,
        osVersion: 14 as never,
        networkType: '5g' as never,
      },
    });
    c.startSession();
    await c.flush();
    expect(bodyOf<{ device: unknown }>(srv.on('/ingest/session')[0]!).device).toEqual({
      sdkVersion: sdk.SDK_VERSION,
      screenWidth: 411,
      screenHeight: 914,
      osVersion: '14',
      networkType: 'unknown',
    });
    expect(errors).toEqual([
      expect.objectContaining({
        kind: 'invalid',
        dropped: false,
        issues: [expect.stringContaining('/device/platform')],
      }),
    ]);
  });

  it('a 422 that names items loses only those; a 422 on a device field resends the start without it', async () => {
    srv.script('/ingest/events', {
      status: 422,
      body: { error: 'Validation failed', details: [{ path: '/events/1/target', message: 'too long' }] },
    });
    srv.script('/ingest/session', {
      status: 422,
      body: { error: 'Validation failed', details: [{ path: '/device/model', message: 'bad' }] },
    });
    const c = client();
    c.startSession();
    for (let i = 0; i < 4; i++) c.trackCustom(`e${i}`);
    await c.flush();
    expect(srv.on('/ingest/session').map((r) => bodyOf<{ device: Record<string, unknown> }>(r).device.model)).toEqual([
      'Pixel 8',
      undefined,
    ]);
    expect(srv.on('/ingest/events').map((r) => seqs(bodyOf<{ events: SdkEvent[] }>(r).events))).toEqual([
      [0, 1, 2, 3],
      [0, 2, 3],
    ]);
    expect(c.stats()).toMatchObject({ rejected: 1, queuedBatches: 0 });
  });
});

describe('finding 3: batches are bounded by bytes', () => {
  it('500 events of ~11 KB go in bodies under 1 MiB, none dropped', async () => {
    const c = client({ compress: false });
    c.startSession();
    const blob = 'x'.repeat(11_000);
    for (let i = 0; i < 500; i++) c.trackCustom('big', { i, blob });
    await c.flush();
    const bodies = srv.on('/ingest/events');
    expect(bodies.length).toBeGreaterThanOrEqual(6);
    for (const b of bodies) expect(b.raw.byteLength).toBeLessThanOrEqual(1024 * 1024);
    // Batches of one session go side by side: sequence numbers order them on the service.
    expect(seqs(eventsSent()).sort((a, b) => a - b)).toEqual(range(0, 500));
    expect(errors).toEqual([]);
  });

  it('a 413 is split in halves and sent again', async () => {
    srv.script(
      '/ingest/events',
      { status: 413, body: { error: 'Body too large' } },
      { status: 413, body: { error: 'Body too large' } },
    );
    const c = client();
    c.startSession();
    for (let i = 0; i < 8; i++) c.trackCustom('e', { i });
    await c.flush();
    const bodies = srv.on('/ingest/events').map((r) => seqs(bodyOf<{ events: SdkEvent[] }>(r).events));
    // The halves go side by side, so the second 413 falls on either of them, which is halved again.
    expect(bodies[0]).toEqual(range(0, 8));
    const rest = bodies
      .slice(1)
      .map((b) => b.join(','))
      .sort();
    expect([
      ['0,1', '0,1,2,3', '2,3', '4,5,6,7'],
      ['0,1,2,3', '4,5', '4,5,6,7', '6,7'],
    ]).toContainEqual(rest);
    expect(errors).toEqual([]);
  });

  it('one event larger than a batch is dropped alone and reported', async () => {
    const c = client({ maxBatchBytes: 32 * 1024 });
    c.startSession();
    c.trackCustom('a');
    expect(c.trackCustom('huge', { s: 'y'.repeat(40_000) })).toBeUndefined();
    c.trackCustom('b');
    await c.flush();
    expect(seqs(eventsSent())).toEqual([0, 1]);
    expect(errors).toEqual([
      expect.objectContaining({ kind: 'invalid', dropped: true, issues: [expect.stringContaining('batch limit')] }),
    ]);
  });
});

describe('finding 4: a hard kill loses at most one persist interval', () => {
  it('the open buffer is saved every second and sent, with the session end, at the next launch', async () => {
    const store = memoryPersistence();
    // The first run's service never answers: the process is killed with everything in flight.
    const hang: FlightrecOptions['fetch'] = (_u, init) =>
      new Promise((_r, reject) => {
        init.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      });
    const a = client({ persistence: store, fetch: hang });
    const sid = a.startSession();
    a.trackNavigate('/home');
    await vi.advanceTimersByTimeAsync(3000);
    a.trackCustom('tapped buy');
    a.recordRequest({
      method: 'GET',
      url: 'https://api.example.com/cart',
      statusCode: 200,
      duration: 4,
      error: null,
      timestamp: Date.now(),
    });
    await vi.advanceTimersByTimeAsync(1000);
    // SIGKILL now: what survives is what the store holds at this moment.
    const survived: Batch[] = structuredClone(store.batches) as Batch[];

    const b = client({ persistence: memoryPersistence() });
    await b.shutdown({ timeoutMs: 0 });
    const next = client({ persistence: { load: async () => survived, save: async () => {} } });
    await next.flush();
    expect(srv.received.map((r) => r.path)).toEqual([
      '/ingest/session',
      '/ingest/events',
      '/ingest/network',
      '/ingest/session/end',
    ]);
    expect(eventsSent().map((e) => [e.sessionId, e.sequenceNumber, e.type])).toEqual([
      [sid, 0, 'navigate'],
      [sid, 1, 'custom'],
    ]);
    expect(requestsSent().map((r) => r.url)).toEqual(['https://api.example.com/cart']);
    expect(bodyOf(srv.on('/ingest/session/end')[0]!)).toEqual({ sessionId: sid, endedAt: T0 + 3000 });
  });
});

describe('finding 5: fetch records', () => {
  it('tell refused from reset connections, scrub secrets from URLs, and record the endpoint origin except /ingest/*', async () => {
    const app = await startFaultServer();
    app.always('/reset', 'reset');
    const deadPort = await freePort(); // bound and released: nothing listens there
    try {
      let wrapped: typeof fetch = fetch;
      const c = client({ fetch: (u, i) => wrapped(u, i) });
      wrapped = c.wrapFetch(fetch);
      c.startSession();
      await wrapped(`${app.url}/login?access_token=abc123&email=a%40b.c&q=shoes&API-Key=k#id_token=xyz&state=1`);
      await expect(wrapped(`http://127.0.0.1:${deadPort}/down`)).rejects.toThrow();
      await expect(wrapped(`${app.url}/reset`)).rejects.toThrow();
      const ctrl = new AbortController();
      const aborted = wrapped(`${app.url}/slow`, { signal: ctrl.signal });
      ctrl.abort();
      await expect(aborted).rejects.toThrow();
      await wrapped(`${srv.url}/api/me`); // the app's own API on the telemetry host
      await c.endSession();
      const reqs = requestsSent();
      expect(reqs.map((r) => [r.url, r.statusCode ?? null, r.error])).toEqual([
        [
          `${app.url}/login?access_token=[Filtered]&email=[Filtered]&q=shoes&API-Key=[Filtered]#id_token=[Filtered]&state=1`,
          201,
          null,
        ],
        [`http://127.0.0.1:${deadPort}/down`, null, `ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${deadPort}`],
        [`${app.url}/reset`, null, 'ECONNRESET: other side closed'],
        [`${app.url}/slow`, null, 'AbortError: This operation was aborted'],
        [`${srv.url}/api/me`, 201, null],
      ]);
      // the SDK's own calls went through the wrapped fetch and were not recorded
      expect(srv.received.filter((r) => r.path.startsWith('/ingest/')).length).toBeGreaterThanOrEqual(3);
    } finally {
      await app.close();
    }
  });

  it('scrubbing follows scrubQueryParams, and can be turned off', () => {
    // A list adds to the defaults; a function replaces them.
    const scrub = sdk.urlScrubber(['order']);
    expect(scrub('https://x/a?order=7&token=t&page=2')).toBe('https://x/a?order=[Filtered]&token=[Filtered]&page=2');
    const only = sdk.urlScrubber((defaults) => [...defaults.filter((n) => n !== 'code'), 'order']);
    expect(only('https://x/cb?code=abc&order=7&token=t')).toBe(
      'https://x/cb?code=abc&order=[Filtered]&token=[Filtered]',
    );
    expect(sdk.urlScrubber(() => ['order'])('https://x/a?order=7&token=t')).toBe(
      'https://x/a?order=[Filtered]&token=t',
    );
    expect(sdk.urlScrubber(false)('https://x/a?token=t')).toBe('https://x/a?token=t');
    expect(sdk.urlScrubber(undefined)('https://u:pw@x/a?refresh_token=r&page=2')).toBe(
      'https://[Filtered]@x/a?refresh_token=[Filtered]&page=2',
    );
  });
});

describe('finding 6: what Sentry and PostHog users expect', () => {
  it('beforeSend changes or drops events, requests and crashes; a throwing hook drops its item', async () => {
    const c = client({
      beforeSend: (item) => {
        if (item.kind === 'event' && item.event.type === 'custom' && item.event.name === 'secret') return null;
        if (item.kind === 'event' && item.event.type === 'custom' && item.event.name === 'boom')
          throw new Error('hook bug');
        if (item.kind === 'event' && item.event.type === 'custom')
          return { kind: 'event', event: { ...item.event, properties: { scrubbed: true }, sequenceNumber: 99 } };
        if (item.kind === 'request')
          return item.request.url.includes('/health')
            ? null
            : { kind: 'request', request: { ...item.request, url: 'https://redacted/' } };
        if (item.kind === 'crash') return { kind: 'crash', crash: { ...item.crash, message: 'redacted' } };
        return item;
      },
    });
    const sid = c.startSession();
    c.trackCustom('kept', { email: 'a@b.c' });
    c.trackCustom('secret');
    c.trackCustom('boom');
    c.trackNavigate('/x');
    c.recordRequest({ method: 'GET', url: 'https://api/health', duration: 1, error: null, timestamp: T0 });
    c.recordRequest({ method: 'GET', url: 'https://api/users/42', duration: 1, error: null, timestamp: T0 });
    await c.reportCrash(new Error('user a@b.c not found'));
    await c.endSession();
    expect(eventsSent().map((e) => [e.type, e.sequenceNumber, (e as { properties?: unknown }).properties])).toEqual([
      ['custom', 0, { scrubbed: true }],
      ['navigate', 1, undefined],
    ]);
    expect(requestsSent().map((r) => r.url)).toEqual(['https://redacted/']);
    expect(bodyOf<CrashReport>(srv.on('/ingest/crash')[0]!)).toMatchObject({ sessionId: sid, message: 'redacted' });
    expect(errors.map((e) => e.kind === 'invalid' && e.message)).toEqual([
      'beforeSend threw (hook bug): event dropped',
    ]);
  });

  it('sampleRate keeps or leaves out whole sessions', async () => {
    const rolls = [0.7, 0.2];
    vi.spyOn(Math, 'random').mockImplementation(() => rolls.shift() ?? 0);
    const c = client({ sampleRate: 0.5 });
    c.startSession(); // 0.7: left out
    expect(c.trackCustom('x')).toBeUndefined();
    c.recordRequest({ method: 'GET', url: 'https://a/', duration: 1, error: null, timestamp: T0 });
    await c.reportCrash(new Error('nope'));
    const kept = c.startSession(); // 0.2: recorded
    c.trackCustom('y');
    await c.endSession();
    expect(srv.received.map((r) => [r.path, bodyOf<{ sessionId: string }>(r).sessionId])).toEqual([
      ['/ingest/session', kept],
      ['/ingest/events', kept],
      ['/ingest/session/end', kept],
    ]);
    expect(errors).toEqual([]);
  });

  it('gzips bodies where the runtime can: a 500-event batch shrinks to a fraction', async () => {
    const c = client();
    c.startSession();
    for (let i = 0; i < 500; i++) c.trackCustom('scroll', { i, screen: '/feed', offset: i * 12 });
    await c.flush();
    const [batch] = srv.on('/ingest/events');
    expect(batch!.headers['content-encoding']).toBe('gzip');
    expect(batch!.raw.byteLength * 5).toBeLessThan(Buffer.byteLength(batch!.body));
    expect(seqs(bodyOf<{ events: SdkEvent[] }>(batch!).events)).toEqual(range(0, 500));
    // small bodies (the session start) are not worth it
    expect(srv.on('/ingest/session')[0]!.headers['content-encoding']).toBeUndefined();
    const plain = client({ compress: false });
    plain.startSession();
    for (let i = 0; i < 50; i++) plain.trackCustom('scroll', { i });
    await plain.flush();
    expect(srv.on('/ingest/events')[1]!.headers['content-encoding']).toBeUndefined();
  });

  it('a 429 on one session does not stall another session; each session keeps its order', async () => {
    srv.script('/ingest/events', { status: 429, headers: { 'retry-after': '30' } });
    const c = client();
    const a = c.startSession();
    c.trackCustom('a0');
    void c.flush();
    await until(() => retries.log.length === 1, 'the 429 retry wait');
    const b = c.startSession(); // ends a behind its throttled batch
    c.trackCustom('b0');
    const done = c.flush();
    await until(() => srv.on('/ingest/events').length === 2, "b's events");
    const bodies = srv.received.map((r) => [r.path, bodyOf<{ sessionId: string }>(r).sessionId, r.at - T0]);
    expect(bodies).toEqual([
      ['/ingest/session', a, 0],
      ['/ingest/events', a, 0],
      ['/ingest/session', b, 0],
      ['/ingest/events', b, 0],
    ]);
    await settle(done, retries.log, 0);
    await until(() => c.stats().queuedBatches === 0, 'the queue to empty');
    const ofA = srv.received
      .filter((r) => bodyOf<{ sessionId: string }>(r).sessionId === a)
      .map((r) => [r.path, r.at - T0]);
    expect(ofA).toEqual([
      ['/ingest/session', 0],
      ['/ingest/events', 0],
      ['/ingest/events', 30_000],
      ['/ingest/session/end', 30_000],
    ]);
  });

  it('XMLHttpRequest calls are recorded like fetch calls, and the patch can be undone', async () => {
    const app = await startFaultServer();
    app.script('/missing', { status: 404 });
    try {
      class Xhr extends NodeXhr {}
      const c = client();
      c.startSession();
      const undo = c.instrumentXhr(Xhr as never);
      const call = (method: string, url: string, body?: string) =>
        new Promise<void>((resolve) => {
          const x = new Xhr();
          x.addEventListener('loadend', () => resolve());
          x.open(method, url);
          x.send(body);
        });
      await call('post', `${app.url}/items?token=t`, 'héllo');
      await call('GET', `${app.url}/missing`);
      await call('GET', 'http://127.0.0.1:1/refused');
      await call('POST', `${srv.url}/ingest/events`, '{}'); // an SDK-shaped call: never recorded
      undo();
      await call('GET', `${app.url}/after-undo`);
      await c.endSession();
      expect(
        requestsSent().map((r) => [r.method, r.url, r.statusCode ?? null, r.requestSize ?? null, r.error]),
      ).toEqual([
        ['POST', `${app.url}/items?token=[Filtered]`, 201, 6, null],
        ['GET', `${app.url}/missing`, 404, null, null],
        ['GET', 'http://127.0.0.1:1/refused', null, null, 'network error'],
      ]);
    } finally {
      await app.close();
    }
  });

  it('React Native: ErrorUtils is wrapped (fatal crash flushed, then the previous handler), AppState flushes and ends long-backgrounded sessions', async () => {
    const previous = vi.fn();
    let handler: ((e: unknown, fatal?: boolean) => void) | undefined = previous;
    const g = globalThis as { ErrorUtils?: unknown };
    g.ErrorUtils = {
      getGlobalHandler: () => handler,
      setGlobalHandler: (h: typeof handler) => {
        handler = h;
      },
    };
    const listeners: ((s: string) => void)[] = [];
    const appState = {
      addEventListener: (_t: 'change', fn: (s: string) => void) => {
        listeners.push(fn);
        return { remove() {} };
      },
    };
    try {
      const c = client({ captureCrashes: true, autoSession: true, appState });
      const first = c.sessionId!;
      expect(handler).not.toBe(previous);
      c.trackCustom('before background');
      for (const fn of listeners) fn('background');
      await srv.waitFor(1, '/ingest/events'); // flushed on background, not at the 5 s tick
      expect(srv.on('/ingest/events')[0]!.at).toBe(T0);
      await vi.advanceTimersByTimeAsync(45_000);
      for (const fn of listeners) fn('active');
      const second = c.sessionId!;
      expect(second).not.toBe(first);
      await srv.waitFor(1, '/ingest/session/end');
      expect(bodyOf(srv.on('/ingest/session/end')[0]!)).toEqual({ sessionId: first, endedAt: T0 });

      handler!(new TypeError('render failed'), true);
      await srv.waitFor(1, '/ingest/crash');
      expect(bodyOf(srv.on('/ingest/crash')[0]!)).toMatchObject({
        sessionId: second,
        message: 'TypeError: render failed',
        isFatal: true,
        handled: false,
      });
      await until(() => previous.mock.calls.length === 1, 'the previous handler');
      expect(previous).toHaveBeenCalledWith(expect.any(TypeError), true);
      await c.shutdown({ timeoutMs: 0 });
      expect(handler).toBe(previous);
    } finally {
      delete g.ErrorUtils;
    }
  });

  it('autoSession: an idle session is ended at its last activity, and the next event starts a new one', async () => {
    const c = client({ autoSession: true, idleTimeoutMs: 60_000 });
    const first = c.sessionId!;
    c.trackCustom('a');
    await vi.advanceTimersByTimeAsync(65_000); // the tick at 60 s ends it
    await srv.waitFor(1, '/ingest/session/end');
    expect(bodyOf(srv.on('/ingest/session/end')[0]!)).toEqual({ sessionId: first, endedAt: T0 });
    expect(c.sessionId).toBeUndefined();
    expect(c.trackCustom('b')).toBe(0);
    expect(c.sessionId).not.toBe(first);
    await c.flush();
    expect(eventsSent().map((e) => [e.sessionId === first, e.sequenceNumber])).toEqual([
      [true, 0],
      [false, 0],
    ]);
  });

  it('browser: uncaught errors and rejections are reported as non-fatal unhandled crashes; hiding the page flushes with keepalive; the OS fills platform', async () => {
    const win = new EventTarget();
    const doc = Object.assign(new EventTarget(), { visibilityState: 'visible' });
    const g = globalThis as Record<string, unknown>;
    const saved = {
      addEventListener: g.addEventListener,
      removeEventListener: g.removeEventListener,
      document: g.document,
      screen: g.screen,
    };
    const nav = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
    Object.assign(g, {
      addEventListener: win.addEventListener.bind(win),
      removeEventListener: win.removeEventListener.bind(win),
      document: doc,
      screen: { width: 1512, height: 982 },
    });
    Object.defineProperty(globalThis, 'navigator', {
      configurable: true,
      value: {
        userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 Chrome/126',
        userAgentData: { platform: 'macOS' },
        language: 'en-GB',
      },
    });
    try {
      expect(sdk.detectDevice()).toMatchObject({
        platform: 'macos',
        osVersion: '10.15.7',
        screenWidth: 1512,
        screenHeight: 982,
      });
      const inits: RequestInit[] = [];
      const c = client({
        captureCrashes: true,
        detectDevice: true,
        device: {},
        fetch: (u, i) => {
          inits.push(i);
          return fetch(u, i);
        },
      });
      c.startSession();
      await srv.waitFor(1, '/ingest/session');
      expect(bodyOf<{ device: { platform: string } }>(srv.on('/ingest/session')[0]!).device.platform).toBe('macos');
      win.dispatchEvent(Object.assign(new Event('error'), { error: new RangeError('bad index') }));
      win.dispatchEvent(Object.assign(new Event('unhandledrejection'), { reason: 'plain string reason' }));
      await srv.waitFor(2, '/ingest/crash');
      expect(
        srv
          .on('/ingest/crash')
          .map((r) => bodyOf<CrashReport>(r))
          .map((x) => [x.message, x.isFatal, x.handled]),
      ).toEqual([
        ['RangeError: bad index', false, false],
        ['plain string reason', false, false],
      ]);
      c.trackCustom('last tap before tab closes');
      doc.visibilityState = 'hidden';
      doc.dispatchEvent(new Event('visibilitychange'));
      await srv.waitFor(1, '/ingest/events');
      expect(inits.at(-1)!.keepalive).toBe(true);
      await c.shutdown({ timeoutMs: 0 });
      win.dispatchEvent(Object.assign(new Event('error'), { error: new Error('after shutdown') }));
      await realPause();
      expect(srv.on('/ingest/crash').map((r) => bodyOf<CrashReport>(r).message)).toHaveLength(2);
    } finally {
      Object.assign(g, saved);
      for (const k of Object.keys(saved)) if (saved[k as keyof typeof saved] === undefined) delete g[k];
      if (nav) Object.defineProperty(globalThis, 'navigator', nav);
      else delete g.navigator;
    }
  });

  it('Node: device fields come from the runtime, under what the app passes', () => {
    const c = client({ detectDevice: true, device: { appVersion: '2.0.0' } });
    c.startSession();
    const d = sdk.detectDevice();
    expect(d.platform).toBe(sdk.platformOf(process.platform));
    expect(d.timezone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(
      sdk.reactNativeDevice({
        Platform: { OS: 'android', Version: 34, constants: { Model: 'Pixel 8', Brand: 'google' } },
        Dimensions: { get: () => ({ width: 411.43, height: 914.29 }) },
      }),
    ).toEqual({
      platform: 'android',
      osVersion: '34',
      model: 'Pixel 8',
      brand: 'google',
      screenWidth: 411.43,
      screenHeight: 914.29,
    });
  });
});
