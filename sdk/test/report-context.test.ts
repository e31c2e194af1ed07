// The context Sentry users expect on a report (issue 33 item 5), read from the request bodies a
// recording stand-in for the service received: user at any time, environment, tags, contexts,
// messages with a level, fingerprints, breadcrumbs (the app's and the console's), the consent
// switch, and init() called twice. (The service's storing of these fields is its own issue;
// these are the optional fields of POST /ingest/crash as the contract names them.)
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as sdk from '../src/index.ts';
import { FlightrecClient, installAutoBreadcrumbs, type FlightrecOptions } from '../src/index.ts';
import { realPause, startFaultServer, type FaultServer } from './helpers/faultServer.ts';

let srv: FaultServer;
beforeEach(async () => {
  srv = await startFaultServer();
});
afterEach(async () => {
  await sdk.shutdown();
  await srv.close();
});

const client = (over: Partial<FlightrecOptions> = {}) =>
  new FlightrecClient({
    apiKey: 'frk_test',
    endpoint: srv.url,
    device: { platform: 'linux' },
    captureCrashes: false,
    flushOnExit: false,
    compress: false,
    ...over,
  });
const crashBodies = () => srv.on('/ingest/crash').map((r) => JSON.parse(r.body) as Record<string, unknown>);

describe('report context', () => {
  it('setUser mid-session: the session is not split, and later reports carry the user', async () => {
    const c = client();
    const sid = c.startSession();
    await c.reportCrash(new Error('before log-in'));
    c.setUser({ id: 'user-42' });
    c.trackCustom('after log-in');
    await c.reportCrash(new Error('after log-in'));
    expect(c.sessionId).toBe(sid);
    c.setUser(null);
    await c.captureMessage('after log-out');
    await c.shutdown();
    expect(srv.on('/ingest/session')).toHaveLength(1);
    expect(crashBodies().map((b) => [b.message, b.userId, b.sessionId])).toEqual([
      ['before log-in', undefined, sid],
      ['after log-in', 'user-42', sid],
      ['after log-out', undefined, sid],
    ]);
  });

  it('environment, tags, contexts, levels and fingerprints are on the report as set when it was made', async () => {
    const c = client({ environment: 'staging' });
    c.startSession();
    c.setTag('release_channel', 'beta');
    c.setTags({ tenant: 'acme', shard: 3, dropped: null });
    c.setContext('cart', { items: 3, total: 42.5 });
    c.setContext('huge', { blob: 'x'.repeat(20_000) }); // over 8 KB: left out
    await c.captureException(new TypeError('caught it'), { fingerprint: ['checkout', 'timeout'] });
    c.setTag('tenant', null);
    await c.captureMessage('disk almost full', 'warning');
    await c.captureMessage('hello');
    await c.reportCrash(new Error('going down'), { isFatal: true });
    await c.shutdown();
    const [exc, warn, info, fatal] = crashBodies();
    expect(exc).toMatchObject({
      message: 'TypeError: caught it',
      handled: true,
      isFatal: false,
      level: 'error',
      environment: 'staging',
      tags: { release_channel: 'beta', tenant: 'acme', shard: '3' },
      context: { cart: { items: 3, total: 42.5 } },
      fingerprint: ['checkout', 'timeout'],
    });
    expect(exc!.context).not.toHaveProperty('huge');
    expect(warn).toMatchObject({
      message: 'disk almost full',
      stackTrace: 'disk almost full',
      level: 'warning',
      handled: true,
      isFatal: false,
      tags: { release_channel: 'beta', shard: '3' },
    });
    expect(warn!.tags).not.toHaveProperty('tenant');
    expect(warn).not.toHaveProperty('fingerprint');
    expect(info).toMatchObject({ message: 'hello', level: 'info' });
    expect(fatal).toMatchObject({ level: 'fatal', isFatal: true });
  });

  it("breadcrumbs: the app's and the console's, the last 100, each well-formed", async () => {
    const c = client();
    const sink = { addBreadcrumb: (b: object) => c.addBreadcrumb(b), isOwnUrl: (u: string) => c.isOwnUrl(u) };
    const undo = installAutoBreadcrumbs(sink, { requests: false });
    try {
      c.startSession();
      for (let i = 0; i < 120; i++) c.addBreadcrumb({ category: 'app', message: `step ${i}`, data: { i } });
      console.warn('low on memory', { free: 12 });
      await c.reportCrash(new Error('with crumbs'));
    } finally {
      undo();
    }
    console.warn('after the undo: not a breadcrumb');
    await c.shutdown();
    type Crumb = { timestamp: number; category: string; message: string; level: string; data?: unknown };
    const crumbs = crashBodies()[0]!.breadcrumbs as Crumb[];
    expect(crumbs).toHaveLength(100);
    expect(crumbs[0]).toMatchObject({ category: 'app', message: 'step 21', level: 'info', data: { i: 21 } });
    expect(typeof crumbs[0]!.timestamp).toBe('number');
    expect(crumbs[99]).toMatchObject({ category: 'console', level: 'warning', message: 'low on memory {"free":12}' });
    expect(c.breadcrumbs.some((b) => b.message.includes('after the undo'))).toBe(false);
  });

  it('beforeSend sees the context fields and may change them; what it returns is checked again', async () => {
    const c = client({
      environment: 'prod',
      beforeSend: (item) =>
        item.kind !== 'crash'
          ? item
          : { ...item, crash: { ...item.crash, tags: { scrubbed: 'yes' }, level: 'bogus' as never } },
    });
    c.startSession();
    c.setTag('secret', 'x');
    await c.captureMessage('m', 'warning');
    await c.shutdown();
    expect(crashBodies()[0]).toMatchObject({ environment: 'prod', tags: { scrubbed: 'yes' }, level: 'warning' });
  });

  it('setEnabled(false): nothing is recorded, sent or stored until it is switched back on', async () => {
    const persistence = sdk.memoryPersistence();
    const c = client({ persistence, flushIntervalMs: 60_000 });
    c.startSession();
    c.trackCustom('consented');
    c.setEnabled(false);
    expect(c.enabled).toBe(false);
    expect(c.trackCustom('not consented')).toBeUndefined();
    expect(c.startSession()).toBe('');
    await c.reportCrash(new Error('not consented'));
    c.addBreadcrumb({ message: 'not consented' });
    await c.flush();
    await realPause(100);
    expect(srv.received.filter((r) => r.path !== '/ingest/session')).toEqual([]);
    expect(persistence.batches).toEqual([]);
    c.setEnabled(true);
    const sid = c.startSession();
    c.trackCustom('consented again');
    await c.captureMessage('ok');
    await c.shutdown();
    type Body = { events: { name: string; sessionId: string }[] };
    const events = srv.on('/ingest/events').flatMap((r) => (JSON.parse(r.body) as Body).events);
    expect(events.map((e) => [e.name, e.sessionId])).toEqual([['consented again', sid]]);
    expect(crashBodies().map((b) => b.message)).toEqual(['ok']);
    expect(crashBodies()[0]!).not.toHaveProperty('breadcrumbs');
  });

  it('enabled: false at start reads and sends nothing until consent', async () => {
    const persistence = sdk.memoryPersistence();
    const c = client({ persistence, enabled: false, autoSession: true });
    c.trackCustom('x');
    await c.flush();
    await realPause(100);
    expect(srv.received).toEqual([]);
    c.setEnabled(true);
    c.trackCustom('y');
    await c.shutdown();
    expect(srv.on('/ingest/session')).toHaveLength(1);
    expect(srv.on('/ingest/events')).toHaveLength(1);
  });

  it('init() twice (hot reload, StrictMode) returns the same client and keeps the session', async () => {
    const opts = {
      apiKey: 'frk_test',
      endpoint: srv.url,
      captureCrashes: false,
      flushOnExit: false,
      autoBreadcrumbs: false,
    };
    const a = sdk.init(opts);
    const sid = sdk.startSession();
    const b = sdk.init({ ...opts, environment: 'ignored' });
    expect(b).toBe(a);
    expect(b.sessionId).toBe(sid);
    await sdk.shutdown();
    const c = sdk.init(opts);
    expect(c).not.toBe(a);
    expect(srv.on('/ingest/session/end')).toHaveLength(1);
  });
});
