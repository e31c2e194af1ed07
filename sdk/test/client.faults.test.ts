import { describe, expect, it, vi } from 'vitest';
import * as sdk from '../src/index.ts';
import { memoryPersistence, type Batch, type NetworkRequest, type SdkEvent } from '../src/index.ts';
import { realPause, startFaultServer, until } from './helpers/faultServer.ts';
import {
  T0,
  bodyOf,
  client,
  errors,
  eventsSent,
  range,
  retries,
  seqs,
  srv,
  useFaultServer,
} from './helpers/harness.ts';
import { runRetriesUntil, settle } from './helpers/drive.ts';
import { freePort } from '../../scripts/freePort.ts';

const PATHS = ['/ingest/session', '/ingest/events', '/ingest/network', '/ingest/crash', '/ingest/session/end'];
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const device = { platform: 'ios', osVersion: '17.2', model: 'iPhone15,2', appVersion: '1.4.0' } as const;

useFaultServer(device);

describe('batching cadence', () => {
  it('sends the session start at once, events every 5 s, network requests every 30 s', async () => {
    const c = client();
    const sid = c.startSession({ userId: 'u-1' });
    await srv.waitFor(1, '/ingest/session');
    expect(bodyOf(srv.on('/ingest/session')[0]!)).toEqual({
      sessionId: sid,
      startedAt: T0,
      userId: 'u-1',
      device: { ...device, sdkVersion: sdk.SDK_VERSION },
    });
    expect(sid).toMatch(UUID_V4);

    expect(c.trackNavigate('/home')).toBe(0);
    expect(c.trackTap({ x: 10.5, y: 20, target: 'buy' })).toBe(1);
    expect(c.trackCustom('purchase', { sku: 'A1' })).toBe(2);
    c.recordRequest({
      method: 'GET',
      url: 'https://api.example.com/a',
      statusCode: 200,
      duration: 12,
      error: null,
      timestamp: T0,
    });

    await vi.advanceTimersByTimeAsync(4999);
    await realPause();
    expect(srv.on('/ingest/events')).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    await srv.waitFor(1, '/ingest/events');
    const [batch] = srv.on('/ingest/events');
    expect(batch!.at).toBe(T0 + 5000);
    expect(bodyOf(batch!)).toEqual({
      sessionId: sid,
      events: [
        { type: 'navigate', from: null, to: '/home', sessionId: sid, timestamp: T0, sequenceNumber: 0 },
        { type: 'tap', x: 10.5, y: 20, target: 'buy', sessionId: sid, timestamp: T0, sequenceNumber: 1 },
        {
          type: 'custom',
          name: 'purchase',
          properties: { sku: 'A1' },
          sessionId: sid,
          timestamp: T0,
          sequenceNumber: 2,
        },
      ],
    });

    await vi.advanceTimersByTimeAsync(24_999);
    await realPause();
    expect(srv.on('/ingest/network')).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    await srv.waitFor(1, '/ingest/network');
    const net = bodyOf<{ sessionId: string; requests: NetworkRequest[] }>(srv.on('/ingest/network')[0]!);
    expect(srv.on('/ingest/network')[0]!.at).toBe(T0 + 30_000);
    expect(net.sessionId).toBe(sid);
    expect(net.requests).toEqual([
      {
        id: expect.stringMatching(UUID_V4),
        method: 'GET',
        url: 'https://api.example.com/a',
        statusCode: 200,
        duration: 12,
        error: null,
        timestamp: T0,
      },
    ]);

    // navigation remembers where it came from; the end goes after the session's last events
    expect(c.trackNavigate('/cart')).toBe(3);
    await c.endSession();
    const last = srv.received.slice(-2);
    expect(last.map((r) => r.path)).toEqual(['/ingest/events', '/ingest/session/end']);
    expect(bodyOf<{ events: SdkEvent[] }>(last[0]!).events).toEqual([
      { type: 'navigate', from: '/home', to: '/cart', sessionId: sid, timestamp: T0 + 30_000, sequenceNumber: 3 },
    ]);
    expect(bodyOf(last[1]!)).toEqual({ sessionId: sid, endedAt: T0 + 30_000 });
    expect(srv.on('/ingest/network')).toHaveLength(1); // nothing new to send at the end
  });

  it('splits larger buffers into batches of at most 500 events and 200 requests, in order', async () => {
    const c = client();
    const sid = c.startSession();
    for (let i = 0; i < 1201; i++) c.trackCustom('e', { i });
    for (let i = 0; i < 450; i++)
      c.recordRequest({ method: 'GET', url: `https://x/${i}`, duration: 1, error: null, timestamp: T0 });
    await c.endSession();
    const sizes = srv.received.map((r) => {
      const b = bodyOf<{ events?: unknown[]; requests?: unknown[] }>(r);
      return `${r.path.replace('/ingest/', '')}${b.events ? `:${b.events.length}` : ''}${b.requests ? `:${b.requests.length}` : ''}`;
    });
    // Several batches of a session may be in flight at once (sdk/src/client.ts), so only the
    // session's start and end have a fixed place; every batch is there, each within its limit.
    expect(sizes[0]).toBe('session');
    expect(sizes.at(-1)).toBe('session/end');
    expect(sizes.slice(1, -1).sort()).toEqual([
      'events:201',
      'events:500',
      'events:500',
      'network:200',
      'network:200',
      'network:50',
    ]);
    expect(seqs(eventsSent()).sort((x, y) => x - y)).toEqual(range(0, 1201));
    expect(
      srv.received.every((r) => r.path === '/ingest/session' || bodyOf<{ sessionId: string }>(r).sessionId === sid),
    ).toBe(true);
    const ids = srv
      .on('/ingest/network')
      .flatMap((r) => bodyOf<{ requests: NetworkRequest[] }>(r).requests.map((q) => q.id));
    expect(new Set(ids).size).toBe(450);
  });

  it('numbers events from 0 in every session', async () => {
    const c = client();
    const a = c.startSession();
    c.trackCustom('x');
    c.trackCustom('y');
    const b = c.startSession(); // ends a first
    c.trackCustom('z');
    await c.flush();
    expect(a).not.toBe(b);
    const evs = eventsSent();
    expect(evs.map((e) => [e.sessionId, e.sequenceNumber]).sort()).toEqual(
      [
        [a, 0],
        [a, 1],
        [b, 0],
      ].sort(),
    );
    // Sessions are sent side by side; each one's own requests stay in order.
    const pathsOf = (sid: string) =>
      srv.received.filter((r) => bodyOf<{ sessionId: string }>(r).sessionId === sid).map((r) => r.path);
    expect(pathsOf(a)).toEqual(['/ingest/session', '/ingest/events', '/ingest/session/end']);
    expect(pathsOf(b)).toEqual(['/ingest/session', '/ingest/events']);
  });
});

describe('delivery under faults', () => {
  it('sends no event before the session start is acknowledged', async () => {
    srv.script('/ingest/session', { status: 500 }, { status: 429 });
    const c = client();
    c.startSession();
    c.trackCustom('a');
    c.trackCustom('b');
    await settle(c.flush(), retries.log);
    expect(srv.received.map((r) => [r.path, r.at - T0])).toEqual([
      ['/ingest/session', 0],
      ['/ingest/session', 2000],
      ['/ingest/session', 6000],
      ['/ingest/events', 6000],
    ]);
    expect(seqs(eventsSent())).toEqual([0, 1]);
  });

  it('drops a batch the service refuses with 400 without retrying, reports it, and goes on', async () => {
    srv.script('/ingest/events', { status: 400, body: { error: 'Bad request' } });
    const c = client({ maxEventsPerBatch: 2 });
    c.startSession();
    for (let i = 0; i < 4; i++) c.trackCustom(`e${i}`);
    await settle(c.flush(), retries.log);
    expect(retries.log).toEqual([]);
    expect(srv.on('/ingest/events').map((r) => seqs(bodyOf<{ events: SdkEvent[] }>(r).events))).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      kind: 'rejected',
      status: 400,
      message: '400 Bad request',
      batch: { kind: 'events', items: 2 },
    });
    expect(c.stats()).toMatchObject({ rejected: 2, queuedBatches: 0, sentBatches: 2 });
  });

  it('keeps a batch that ran out of retries and resends the same bytes at the next flush', async () => {
    srv.script('/ingest/events', { status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
    const c = client();
    c.startSession();
    c.trackCustom('only');
    await settle(c.flush(), retries.log);
    expect(srv.on('/ingest/events').map((r) => r.at - T0)).toEqual([0, 2000, 6000, 14_000]);
    expect(errors.map((e) => e.kind)).toEqual(['retry-exhausted']);
    expect(c.stats()).toMatchObject({ queuedBatches: 1, queuedItems: 1 });

    // the next 5 s tick (at 15 s) resumes sending
    await vi.advanceTimersByTimeAsync(999);
    await realPause();
    expect(srv.on('/ingest/events')).toHaveLength(4);
    await vi.advanceTimersByTimeAsync(1);
    await srv.waitFor(5, '/ingest/events');
    await until(() => c.stats().queuedBatches === 0, 'the queue to empty');
    const sent = srv.on('/ingest/events');
    expect(sent.at(-1)!.at).toBe(T0 + 15_000);
    expect(new Set(sent.map((r) => r.body)).size).toBe(1);
  });

  it('after retry cycles run out in a row, timer ticks back off: next tick, then 5 s, 10 s, … up to 60 s', async () => {
    srv.always('/ingest/events', { status: 500 });
    const c = client();
    c.startSession();
    c.trackCustom('x');
    await settle(c.flush(), retries.log); // cycle 1: 0, 2, 6, 14 s
    await vi.advanceTimersByTimeAsync(1000); // the tick at 15 s resumes
    let next = await runRetriesUntil(() => errors.length === 2, retries.log, 3); // cycle 2: 15, 17, 21, 29 s
    await vi.advanceTimersByTimeAsync(1000); // the tick at 30 s is inside the 5 s back-off
    await realPause();
    expect(srv.on('/ingest/events')).toHaveLength(8);
    await vi.advanceTimersByTimeAsync(5000); // the tick at 35 s resumes
    await srv.waitFor(9, '/ingest/events');
    next = await runRetriesUntil(() => errors.length === 3, retries.log, next); // cycle 3: 35, 37, 41, 49 s
    srv.always('/ingest/events', undefined);
    await vi.advanceTimersByTimeAsync(10_000); // ticks at 50 and 55 s are inside the 10 s back-off
    await realPause();
    expect(srv.on('/ingest/events')).toHaveLength(12);
    await vi.advanceTimersByTimeAsync(1000); // the tick at 60 s resumes
    await until(() => c.stats().queuedBatches === 0, 'the queue to empty');
    expect(srv.on('/ingest/events').map((r) => (r.at - T0) / 1000)).toEqual([
      0, 2, 6, 14, 15, 17, 21, 29, 35, 37, 41, 49, 60,
    ]);
    expect(new Set(srv.on('/ingest/events').map((r) => r.body)).size).toBe(1);
  });

  it('bounds the queue: drops the oldest batches (never the one in flight) and counts them', async () => {
    srv.always('/ingest/events', { status: 503 });
    const c = client({ maxQueueItems: 1000 });
    c.startSession();
    for (let i = 0; i < 500; i++) c.trackCustom('e');
    await srv.waitFor(1, '/ingest/events');
    await until(() => retries.log.length === 1, 'the first retry wait');
    for (let i = 500; i < 1500; i++) c.trackCustom('e');
    expect(c.dropped).toBe(500);
    expect(errors).toEqual([
      expect.objectContaining({ kind: 'dropped', batch: expect.objectContaining({ items: 500 }) }),
    ]);
    const droppedSeqs = seqs(JSON.parse((errors[0] as { batch: Batch }).batch.body).events);
    expect(droppedSeqs).toEqual(range(500, 1000));

    srv.always('/ingest/events', undefined);
    await settle(c.flush(), retries.log);
    const delivered = new Set(seqs(eventsSent()));
    expect([...delivered].sort((a, b) => a - b)).toEqual([...range(0, 500), ...range(1000, 1500)]);
    expect(c.stats()).toMatchObject({ dropped: 500, queuedBatches: 0 });
  });

  it('keeps unsent batches across a restart and sends them byte-identical', async () => {
    for (const p of PATHS) srv.always(p, { status: 503 });
    const store = memoryPersistence();
    const a = client({ persistence: store });
    const sid = a.startSession({ userId: 'u-9' });
    a.trackNavigate('/a');
    a.trackCustom('x', { n: 1 });
    a.recordRequest({
      method: 'GET',
      url: 'https://api.example.com/feed',
      statusCode: 200,
      duration: 5,
      error: null,
      timestamp: T0,
    });
    const err = new TypeError('boom');
    void a.reportCrash(err, { isFatal: true, handled: false }); // seals the requests too: the app is going down
    await settle(a.shutdown({ timeoutMs: 3000 }), retries.log);
    const tried = srv.received.map((r) => r.body);
    expect(tried.length).toBeGreaterThanOrEqual(2); // the session start, retried, until the shutdown deadline

    expect(store.batches.map((b) => b.kind)).toEqual(['session', 'events', 'network', 'crash', 'sessionEnd']);
    expect(store.batches[0]!.body).toBe(tried[0]);
    expect(JSON.parse(store.batches[3]!.body)).toEqual({
      sessionId: sid,
      message: 'TypeError: boom',
      stackTrace: err.stack,
      isFatal: true,
      handled: false,
      timestamp: T0,
      level: 'fatal',
      userId: 'u-9',
    });
    expect(err.stack).toMatch(/^TypeError: boom\n\s+at /);

    for (const p of PATHS) srv.always(p, undefined);
    const before = srv.received.length;
    const stored = store.batches.map((x) => x.body);
    const b = client({ persistence: store });
    await b.flush();
    const resent = srv.received.slice(before);
    expect(resent.map((r) => r.path)).toEqual([
      '/ingest/session',
      '/ingest/events',
      '/ingest/network',
      '/ingest/crash',
      '/ingest/session/end',
    ]);
    expect(resent.map((r) => r.body)).toEqual(stored);
    await until(() => store.batches.length === 0, 'the stored queue to empty');
    expect(resent[0]!.body).toBe(tried[0]);
    expect(seqs(bodyOf<{ events: SdkEvent[] }>(resent[1]!).events)).toEqual([0, 1]);
  });
});

describe('fetch instrumentation', () => {
  it('records the app requests of the session, never the SDK own calls', async () => {
    const app = await startFaultServer();
    app.script('/missing', { status: 404, body: { error: 'nope' } });
    const deadPort = await freePort(); // bound and released: nothing listens there
    try {
      // The SDK itself sends through the wrapped fetch here: its calls must still not be recorded.
      let wrapped: typeof fetch = fetch;
      const c = client({ fetch: (u, i) => wrapped(u, i) });
      wrapped = c.wrapFetch(fetch);

      await wrapped(`${app.url}/before-any-session`);
      const sid = c.startSession();
      const r1 = await wrapped(`${app.url}/items?q=1`, { method: 'post', body: 'héllo' });
      expect(await r1.json()).toEqual({ ok: true });
      const r2 = await wrapped(new Request(`${app.url}/missing`, { method: 'DELETE' }));
      expect(r2.status).toBe(404);
      await expect(wrapped(`http://127.0.0.1:${deadPort}/down`)).rejects.toThrow();
      await wrapped(`${srv.url}/ingest/anything`, { method: 'POST', body: '{}' });
      await c.endSession();

      const reqs = srv
        .on('/ingest/network')
        .flatMap((r) => bodyOf<{ sessionId: string; requests: NetworkRequest[] }>(r).requests);
      expect(reqs).toEqual([
        {
          id: expect.stringMatching(UUID_V4),
          method: 'POST',
          url: `${app.url}/items?q=1`,
          statusCode: 201,
          duration: 0,
          requestSize: 6,
          responseSize: 11,
          error: null,
          timestamp: T0,
        },
        {
          id: expect.stringMatching(UUID_V4),
          method: 'DELETE',
          url: `${app.url}/missing`,
          statusCode: 404,
          duration: 0,
          responseSize: 16,
          error: null,
          timestamp: T0,
        },
        {
          id: expect.stringMatching(UUID_V4),
          method: 'GET',
          url: `http://127.0.0.1:${deadPort}/down`,
          duration: 0,
          error: `ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${deadPort}`,
          timestamp: T0,
        },
      ]);
      expect(bodyOf<{ sessionId: string }>(srv.on('/ingest/network')[0]!).sessionId).toBe(sid);
      expect(srv.received.filter((r) => r.path === '/ingest/anything')).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('the default-instance facade tracks and instruments after init()', async () => {
    const app = await startFaultServer();
    try {
      const f = sdk.instrumentFetch(fetch); // made before init: passes through until then
      expect(sdk.trackCustom('ignored')).toBeUndefined();
      await f(`${app.url}/early`);
      sdk.init({ apiKey: 'frk_test', endpoint: srv.url, device, timeoutMs: 0, onError: (e) => errors.push(e) });
      expect(sdk.trackCustom('no-session')).toBeUndefined();
      expect(errors.map((e) => e.kind)).toEqual(['usage']);
      const sid = sdk.startSession({ userId: 'u' });
      expect(sdk.trackNavigate('/home')).toBe(0);
      expect(sdk.trackTap({ x: 1, y: 2 })).toBe(1);
      expect(sdk.trackNetwork({ method: 'GET', url: 'https://api/x', statusCode: 500, duration: 33.4 })).toBe(2);
      await f(`${app.url}/late`);
      await sdk.reportCrash(new Error('handled one'));
      await sdk.shutdown();
      expect(srv.received.map((r) => r.path)).toEqual([
        '/ingest/session',
        '/ingest/events',
        '/ingest/crash',
        '/ingest/network',
        '/ingest/session/end',
      ]);
      expect(bodyOf<{ events: SdkEvent[] }>(srv.on('/ingest/events')[0]!).events[2]).toEqual({
        type: 'network',
        method: 'GET',
        url: 'https://api/x',
        statusCode: 500,
        duration: 33,
        error: null,
        sessionId: sid,
        timestamp: T0,
        sequenceNumber: 2,
      });
      expect(bodyOf(srv.on('/ingest/crash')[0]!)).toMatchObject({
        message: 'handled one',
        isFatal: false,
        handled: true,
      });
      expect(bodyOf<{ requests: NetworkRequest[] }>(srv.on('/ingest/network')[0]!).requests.map((r) => r.url)).toEqual([
        `${app.url}/late`,
      ]);
    } finally {
      await app.close();
    }
  });
});
