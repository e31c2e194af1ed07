// The SDK in a real browser (issue 23): a page served on one origin (127.0.0.1, port A) loads
// the SDK as built for apps (the SDK's own build script, ES modules) and sends to the service
// on another origin (port B): CORS preflights, readable answers, and leaving the page (pagehide)
// sends the queue and the session end with keepalive, the rest handed to the next visit.
// What arrived is counted through the export API.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { waitFor } from './helpers/wait.ts';
import { hasChromium, launchChromium } from './helpers/browser.ts';

describe.skipIf(!hasChromium)('the SDK in Chromium, on another origin than the service', () => {
  let s: TestServer;
  let service: string;
  let pages: http.Server;
  let origin: string;
  let browser: Browser;
  let buildDir: string;
  let proxy: http.Server;
  let proxied: string;
  let proxyUp = true;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    buildDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-sdk-web-'));
    const built = spawnSync(process.execPath, ['sdk/scripts/build.mjs', buildDir], { encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);

    s = await startTestServer({ RATE_LIMIT_EXPORT_PER_MIN: '100000', RATE_LIMIT_INGEST_PER_MIN: '100000' });
    await s.app.listen({ host: '127.0.0.1', port: 0 });
    service = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`;

    // The app's origin: a page that loads the built SDK as an ES module, and an API of its own.
    pages = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname.startsWith('/sdk/')) {
        const file = path.join(buildDir, 'esm', path.basename(url.pathname));
        if (!fs.existsSync(file)) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'text/javascript' });
        return void res.end(fs.readFileSync(file));
      }
      if (url.pathname === '/api/ping')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        url.pathname === '/other'
          ? '<!doctype html><title>other</title><p>another page</p>'
          : '<!doctype html><title>app</title><script type="module">import * as f from "/sdk/index.js"; window.flightrec = f; window.sdkLoaded = true;</script>',
      );
    });
    await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;

    // A way to the service that the tests can cut: down, every connection is reset (the page
    // sees a network failure); up, requests and answers pass through unchanged.
    proxy = http.createServer((req, res) => {
      if (!proxyUp) return void req.socket.destroy();
      const fwd = http.request(`${service}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      fwd.on('error', () => req.socket.destroy());
      req.pipe(fwd);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    proxied = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
    await new Promise<void>((r) => (pages ? pages.close(() => r()) : r()));
    await s?.close();
    if (buildDir) fs.rmSync(buildDir, { recursive: true, force: true });
  });

  async function openApp(context?: BrowserContext): Promise<Page> {
    const page = await (context ?? (await browser.newContext())).newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => (window as unknown as { sdkLoaded?: boolean }).sdkLoaded === true);
    return page;
  }

  async function exported<T>(apiKey: string, route: string): Promise<T[]> {
    await s.settled(); // the spools have loaded what the pages sent
    const r = await fetch(`${service}${route}${route.includes('?') ? '&' : '?'}limit=1000`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(r.status).toBe(200);
    return ((await r.json()) as { data: T[] }).data;
  }
  const sessions = (k: string) => exported<{ id: string; status: string; platform: string }>(k, '/export/sessions');
  const events = (k: string, sid: string) => exported<{ sequenceNumber: number }>(k, `/export/events?sessionId=${sid}`);
  const network = (k: string) => exported<{ sessionId: string; url: string }>(k, '/export/network');
  const crashes = (k: string) => exported<{ message: string; occurrenceCount: number }>(k, '/export/crashes');
  const handedOver = (page: Page) =>
    page.evaluate(() => {
      return Object.keys(localStorage).filter((k) => k.startsWith('flightrec.unsent'));
    });
  const counted = async (k: string) => (await crashes(k)).map((c) => [c.message, c.occurrenceCount]);
  type Sdk = typeof import('../sdk/src/index.ts');

  /** Starts the default client in the page and a session; resolves once the start was acknowledged. */
  async function startIn(page: Page, apiKey: string, extra: { maxBatchBytes?: number } = {}): Promise<string> {
    return page.evaluate(
      async ({ apiKey, endpoint, extra }) => {
        const f = (window as unknown as { flightrec: typeof import('../sdk/src/index.ts') }).flightrec;
        const errors: unknown[] = [];
        (window as unknown as { sdkErrors: unknown[] }).sdkErrors = errors;
        const c = f.init({
          apiKey,
          endpoint,
          device: { appVersion: '1.0.0' },
          onError: (e) => errors.push(e.message),
          ...extra,
        });
        const sid = f.startSession({ userId: 'web-user' })!;
        while (c.stats().sentBatches < 1) await new Promise((r) => setTimeout(r, 20));
        return sid;
      },
      { apiKey, endpoint: service, extra },
    );
  }

  it('a page on another origin sends: preflights answered, session, events, fetch records and the end arrive', async () => {
    const { apiKey } = await s.createProject('browser cors');
    const page = await openApp();
    const sid = await startIn(page, apiKey);
    const errors = await page.evaluate(async () => {
      const f = (window as unknown as { flightrec: typeof import('../sdk/src/index.ts') }).flightrec;
      const appFetch = f.instrumentFetch(window.fetch.bind(window));
      f.trackNavigate('/cart');
      for (let i = 0; i < 20; i++) f.trackCustom('add_to_cart', { i });
      f.trackTap({ x: 10, y: 20, target: 'buy' });
      await (await appFetch('/api/ping')).text();
      await f.flush();
      await f.endSession();
      return (window as unknown as { sdkErrors: unknown[] }).sdkErrors;
    });
    expect(errors).toEqual([]);
    expect(await sessions(apiKey)).toMatchObject([{ id: sid, status: 'completed', platform: 'linux' }]);
    expect((await events(apiKey, sid)).map((e) => e.sequenceNumber)).toEqual(Array.from({ length: 22 }, (_, i) => i));
    expect((await network(apiKey)).map((n) => [n.sessionId, n.url])).toEqual([[sid, `${origin}/api/ping`]]);
    expect(consoleErrors.filter((e) => /CORS|Access-Control/i.test(e))).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('an error answer is readable by the page (401 with CORS headers), so the SDK reports it instead of a network failure', async () => {
    const page = await openApp();
    const seen = await page.evaluate(async (endpoint) => {
      const f = (window as unknown as { flightrec: typeof import('../sdk/src/index.ts') }).flightrec;
      const errors: { kind: string; status?: number }[] = [];
      const c = new f.FlightrecClient({
        apiKey: 'frk_not_a_key',
        endpoint,
        onError: (e) => errors.push({ kind: e.kind, status: (e as { status?: number }).status }),
      });
      c.startSession();
      await c.flush();
      await c.shutdown({ timeoutMs: 1000 });
      return errors;
    }, service);
    expect(seen).toContainEqual({ kind: 'rejected', status: 401 });
    await page.context().close();
  }, 60_000);

  it('pagehide sends the whole queue and the session end with keepalive', async () => {
    const { apiKey } = await s.createProject('browser pagehide');
    const page = await openApp();
    const sid = await startIn(page, apiKey);
    await page.evaluate(() => {
      const f = (window as unknown as { flightrec: typeof import('../sdk/src/index.ts') }).flightrec;
      f.trackNavigate('/checkout');
      for (let i = 0; i < 30; i++) f.trackCustom('step', { i });
      for (let i = 0; i < 5; i++)
        f.getClient()!.recordRequest({
          method: 'GET',
          url: `https://api.example.com/i/${i}`,
          statusCode: 200,
          duration: 9,
          error: null,
          timestamp: Date.now(),
        });
    });
    // Leaving the page: nothing was flushed (the 5 s and 30 s ticks are far away).
    await page.goto(`${origin}/other`);
    await waitFor(
      'the queue and the end',
      async () => (await events(apiKey, sid)).length === 31 && (await sessions(apiKey))[0]?.status === 'completed',
      15_000,
      250,
    );
    expect((await network(apiKey)).filter((n) => n.sessionId === sid)).toHaveLength(5);
    // The page was gone before it could learn that its keepalive requests arrived: they stay
    // handed over, and the next visit sends them again, which the service collapses.
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => (window as unknown as { sdkLoaded?: boolean }).sdkLoaded === true);
    await page.evaluate(
      (o) => {
        (window as unknown as { flightrec: typeof import('../sdk/src/index.ts') }).flightrec.init(o);
      },
      { apiKey, endpoint: service },
    );
    await waitFor('the hand-off sent again', async () => (await handedOver(page)).length === 0, 15_000, 100);
    expect((await events(apiKey, sid)).map((e) => e.sequenceNumber)).toEqual(Array.from({ length: 31 }, (_, i) => i));
    expect((await network(apiKey)).filter((n) => n.sessionId === sid)).toHaveLength(5);
    expect((await sessions(apiKey)).map((x) => x.status)).toEqual(['completed']);
    await page.context().close();
  }, 60_000);

  it('closing the tab does the same: the queue and the end arrive', async () => {
    const { apiKey } = await s.createProject('browser close');
    const page = await openApp();
    const sid = await startIn(page, apiKey);
    await page.evaluate(() => {
      const f = (window as unknown as { flightrec: typeof import('../sdk/src/index.ts') }).flightrec;
      for (let i = 0; i < 12; i++) f.trackCustom('last words', { i });
    });
    await page.close();
    await waitFor(
      'the queue and the end',
      async () => (await events(apiKey, sid)).length === 12 && (await sessions(apiKey))[0]?.status === 'completed',
      15_000,
      250,
    );
  }, 60_000);

  it('a hidden page sends with keepalive and leaves a provisional end for the next load; shown again, it takes that back', async () => {
    const { apiKey } = await s.createProject('browser hidden');
    const page = await openApp();
    const sid = await startIn(page, apiKey);
    const setVisibility = (state: string) =>
      page.evaluate((v) => {
        Object.defineProperty(document, 'visibilityState', { value: v, configurable: true });
        document.dispatchEvent(new Event('visibilitychange'));
      }, state);
    await page.evaluate(() => {
      const f = (window as unknown as { flightrec: typeof import('../sdk/src/index.ts') }).flightrec;
      for (let i = 0; i < 10; i++) f.trackCustom('before hiding', { i });
    });
    await setVisibility('hidden');
    const storedKeys = () => page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('flightrec.')));
    // Were the tab killed now, the next load would end the session where it was last seen.
    expect(await storedKeys()).toHaveLength(1);
    await waitFor('the events', async () => (await events(apiKey, sid)).length === 10, 15_000, 250);
    await setVisibility('visible');
    expect(await storedKeys()).toEqual([]);
    expect((await sessions(apiKey))[0]).toMatchObject({ id: sid, status: 'active' });
    await page.context().close();
  }, 60_000);

  it('what does not fit the 64 KiB keepalive budget is kept in localStorage and sent at the next visit', async () => {
    const { apiKey } = await s.createProject('browser budget');
    const page = await openApp();
    // Batches large enough that the 400 KB burst is still queued when the page is left (with the
    // default size it is sealed and sent at once, and whether it arrives first is a race).
    const sid = await startIn(page, apiKey, { maxBatchBytes: 4 * 1024 * 1024 });
    await page.evaluate(() => {
      const f = (window as unknown as { flightrec: typeof import('../sdk/src/index.ts') }).flightrec;
      const blob = 'x'.repeat(1000);
      for (let i = 0; i < 400; i++) f.trackCustom('big', { i, blob });
    });
    await page.goto(`${origin}/other`);
    // The end and the first ~60 KB went out on the way; the rest waits in localStorage.
    await waitFor(
      'the end and a first part',
      async () => (await sessions(apiKey))[0]?.status === 'completed' && (await events(apiKey, sid)).length > 0,
      15_000,
      250,
    );
    const first = (await events(apiKey, sid)).length;
    expect(first).toBeGreaterThan(20);
    // How much more leaves while the page goes depends on how fast the service frees the
    // browser's keepalive budget; what has not left is in localStorage for the next visit.
    const stored = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('flightrec.')));
    if (first < 400) expect(stored).toHaveLength(1);

    // The next visit takes it over and sends it.
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => (window as unknown as { sdkLoaded?: boolean }).sdkLoaded === true);
    await page.evaluate(
      (o) => {
        const f = (window as unknown as { flightrec: typeof import('../sdk/src/index.ts') }).flightrec;
        f.init({ apiKey: o.apiKey, endpoint: o.endpoint });
      },
      { apiKey, endpoint: service },
    );
    await waitFor('all 400 events', async () => (await events(apiKey, sid)).length === 400, 20_000, 250);
    expect((await events(apiKey, sid)).map((e) => e.sequenceNumber)).toEqual(Array.from({ length: 400 }, (_, i) => i));
    expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('flightrec.')))).toEqual([]);
    expect((await sessions(apiKey)).map((x) => x.status)).toEqual(['completed']);
    await page.context().close();
  }, 90_000);

  /** Leaves the page (pagehide), brings the service back, and opens the next visit, which takes the hand-off. */
  async function leaveAndComeBack(page: Page, apiKey: string): Promise<void> {
    await page.goto(`${origin}/other`);
    expect(await handedOver(page)).toHaveLength(1);
    proxyUp = true;
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => (window as unknown as { sdkLoaded?: boolean }).sdkLoaded === true);
    const opts = { apiKey, endpoint: proxied };
    await page.evaluate((o) => void (window as unknown as { flightrec: Sdk }).flightrec.init(o), opts);
    await waitFor('the hand-off sent', async () => (await handedOver(page)).length === 0, 30_000, 100);
  }

  it('service down from the start: start, events, crash and end handed over, sent once by the next visit', async () => {
    const { apiKey } = await s.createProject('browser outage from start');
    proxyUp = false;
    try {
      const page = await openApp();
      const sid = await page.evaluate(
        ({ apiKey, endpoint }) => {
          const f = (window as unknown as { flightrec: Sdk }).flightrec;
          f.init({ apiKey, endpoint, device: { appVersion: '1.0.0' } });
          const id = f.startSession({ userId: 'u' })!;
          for (let i = 0; i < 8; i++) f.trackCustom('offline', { i });
          void f.reportCrash(new Error('boom while the service is down'));
          return id;
        },
        { apiKey, endpoint: proxied },
      );
      await leaveAndComeBack(page, apiKey);
      await waitFor('the session ended', async () => (await sessions(apiKey))[0]?.status === 'completed', 15_000, 100);
      expect((await sessions(apiKey)).map((x) => x.id)).toEqual([sid]);
      expect((await events(apiKey, sid)).map((e) => e.sequenceNumber)).toEqual(Array.from({ length: 8 }, (_, i) => i));
      expect(await counted(apiKey)).toEqual([[expect.stringContaining('boom while'), 1]]);
      await page.context().close();
    } finally {
      proxyUp = true;
    }
  }, 90_000);

  it('service down mid-session: all the page could not send arrives once at the next visit', async () => {
    const { apiKey } = await s.createProject('browser outage mid-session');
    const page = await openApp();
    const sid = await page.evaluate(
      async ({ apiKey, endpoint }) => {
        const f = (window as unknown as { flightrec: Sdk }).flightrec;
        const c = f.init({ apiKey, endpoint, device: { appVersion: '1.0.0' } });
        const id = f.startSession()!;
        f.trackCustom('online', { i: 0 });
        await f.flush();
        while (c.stats().sentBatches < 2) await new Promise((r) => setTimeout(r, 20));
        return id;
      },
      { apiKey, endpoint: proxied },
    );
    proxyUp = false;
    try {
      await page.evaluate(() => {
        const f = (window as unknown as { flightrec: Sdk }).flightrec;
        for (let i = 0; i < 6; i++) f.trackCustom('offline', { i });
        void f.reportCrash(new Error('boom mid-outage'));
        void f.flush();
      });
      await leaveAndComeBack(page, apiKey);
      await waitFor('the session ended', async () => (await sessions(apiKey))[0]?.status === 'completed', 15_000, 100);
      expect((await events(apiKey, sid)).map((e) => e.sequenceNumber)).toEqual(Array.from({ length: 7 }, (_, i) => i));
      expect(await counted(apiKey)).toEqual([[expect.stringContaining('boom mid-outage'), 1]]);
      await page.context().close();
    } finally {
      proxyUp = true;
    }
  }, 90_000);

  it('keyValuePersistence(localStorage): a page left in an outage keeps everything for the next visit', async () => {
    const { apiKey } = await s.createProject('browser kv outage');
    proxyUp = false;
    try {
      const page = await openApp();
      const opts = { apiKey, endpoint: proxied };
      const sid = await page.evaluate((o) => {
        const f = (window as unknown as { flightrec: Sdk }).flightrec;
        f.init({ ...o, persistence: f.keyValuePersistence(localStorage, 'flightrec.kv') });
        const id = f.startSession()!;
        for (let i = 0; i < 5; i++) f.trackCustom('offline', { i });
        void f.flush();
        return id;
      }, opts);
      await page.goto(`${origin}/other`);
      proxyUp = true;
      await page.goto(`${origin}/`);
      await page.waitForFunction(() => (window as unknown as { sdkLoaded?: boolean }).sdkLoaded === true);
      await page.evaluate((o) => {
        const f = (window as unknown as { flightrec: Sdk }).flightrec;
        f.init({ ...o, persistence: f.keyValuePersistence(localStorage, 'flightrec.kv') });
      }, opts);
      await waitFor('the session ended', async () => (await sessions(apiKey))[0]?.status === 'completed', 30_000, 100);
      await waitFor('the events', async () => (await events(apiKey, sid)).length === 5, 15_000, 100);
      expect((await events(apiKey, sid)).map((e) => e.sequenceNumber)).toEqual([0, 1, 2, 3, 4]);
      await page.context().close();
    } finally {
      proxyUp = true;
    }
  }, 90_000);

  it("a second tab does not end the first tab's session: a hidden tab's provisional end is held for it", async () => {
    const { apiKey } = await s.createProject('browser two tabs');
    const context = await browser.newContext();
    const a = await openApp(context);
    const sid = await startIn(a, apiKey);
    await a.evaluate(() => {
      const f = (window as unknown as { flightrec: Sdk }).flightrec;
      for (let i = 0; i < 3; i++) f.trackCustom('in tab A', { i });
    });
    const setVisibility = (state: string) =>
      a.evaluate((v) => {
        Object.defineProperty(document, 'visibilityState', { value: v, configurable: true });
        document.dispatchEvent(new Event('visibilitychange'));
      }, state);
    await setVisibility('hidden');
    expect(await handedOver(a)).toHaveLength(1);
    await waitFor("tab A's events", async () => (await events(apiKey, sid)).length === 3, 15_000, 100);

    // Tab B of the same origin loads the SDK (and sends what it takes over) while A lives.
    const b = await openApp(context);
    const bSession = await b.evaluate(
      async ({ apiKey, endpoint }) => {
        const f = (window as unknown as { flightrec: Sdk }).flightrec;
        f.init({ apiKey, endpoint });
        const id = f.startSession()!;
        await f.flush();
        await f.endSession();
        return id;
      },
      { apiKey, endpoint: service },
    );
    expect(await handedOver(b)).toHaveLength(1);
    expect((await sessions(apiKey)).find((x) => x.id === bSession)?.status).toBe('completed');
    expect((await sessions(apiKey)).find((x) => x.id === sid)?.status).toBe('active');

    // A comes back, goes on and ends its session itself.
    await setVisibility('visible');
    expect(await handedOver(a)).toEqual([]);
    await a.evaluate(async () => {
      const f = (window as unknown as { flightrec: Sdk }).flightrec;
      f.trackCustom('back in tab A');
      await f.endSession();
    });
    const endedByA = async () => (await sessions(apiKey)).find((x) => x.id === sid)?.status === 'completed';
    await waitFor('A ended by A', endedByA, 15_000, 100);
    expect((await events(apiKey, sid)).map((e) => e.sequenceNumber)).toEqual([0, 1, 2, 3]);
    await context.close();
  }, 90_000);

  it('an uncaught error before any session is reported, in a session started for it', async () => {
    const { apiKey } = await s.createProject('browser early crash');
    const page = await openApp();
    await page.evaluate(
      ({ apiKey, endpoint }) => {
        const f = (window as unknown as { flightrec: Sdk }).flightrec;
        f.init({ apiKey, endpoint, flushIntervalMs: 300 });
        setTimeout(() => {
          throw new Error('thrown before any session');
        }, 0);
      },
      { apiKey, endpoint: service },
    );
    await waitFor('the crash', async () => (await crashes(apiKey)).length === 1, 15_000, 100);
    expect(await counted(apiKey)).toEqual([['thrown before any session', 1]]);
    expect((await sessions(apiKey)).map((x) => x.status)).toEqual(['completed']);
    await page.context().close();
  }, 60_000);

  it('automatic breadcrumbs: console, clicks, History API, fetch/XHR ride on the next report', async () => {
    const { apiKey } = await s.createProject('browser breadcrumbs');
    const page = await openApp();
    const bodies: Record<string, unknown>[] = [];
    page.on('request', (r) => {
      if (!r.url().endsWith('/ingest/crash') || r.method() !== 'POST') return;
      bodies.push(JSON.parse(r.postData() ?? '{}') as Record<string, unknown>);
    });
    await page.evaluate(
      async ({ apiKey, endpoint }) => {
        const f = (window as unknown as { flightrec: Sdk }).flightrec;
        f.init({ apiKey, endpoint, compress: false, environment: 'e2e' });
        f.startSession();
        f.setUser({ id: 'shopper-1' });
        f.setTag('plan', 'pro');
        const b = document.createElement('button');
        b.id = 'buy';
        b.textContent = 'Buy now';
        document.body.append(b);
        b.click();
        history.pushState({}, '', '/cart');
        history.replaceState({}, '', '/cart?step=2');
        console.error('payment widget failed');
        await (await fetch('/api/ping')).text();
        await new Promise<void>((r) => {
          const x = new XMLHttpRequest();
          x.open('GET', '/api/ping?xhr=1');
          // After the SDK's own loadend listener (added at send) has recorded it.
          x.onloadend = () => setTimeout(r, 0);
          x.send();
        });
        history.pushState({}, '', '/checkout');
        await new Promise<void>((r) => {
          addEventListener('popstate', () => r(), { once: true });
          history.back();
        });
        await f.captureMessage('checkout abandoned', 'warning');
      },
      { apiKey, endpoint: service },
    );
    expect(bodies).toHaveLength(1);
    const report = bodies[0]!;
    expect(report).toMatchObject({
      message: 'checkout abandoned',
      level: 'warning',
      environment: 'e2e',
      userId: 'shopper-1',
      tags: { plan: 'pro' },
      handled: true,
    });
    const crumbs = report.breadcrumbs as { category: string; message: string; level: string; timestamp: number }[];
    expect(crumbs.map((c) => [c.category, c.message])).toEqual([
      ['ui.click', 'button#buy "Buy now"'],
      ['navigation', `${origin}/cart`],
      ['navigation', `${origin}/cart?step=2`],
      ['console', 'payment widget failed'],
      ['fetch', `GET ${origin}/api/ping [200]`],
      ['xhr', `GET ${origin}/api/ping?xhr=1 [200]`],
      ['navigation', `${origin}/checkout`],
      ['navigation', `${origin}/cart?step=2`],
    ]);
    const levels = ['info', 'warning', 'error'];
    const wellFormed = (c: (typeof crumbs)[number]) => typeof c.timestamp === 'number' && levels.includes(c.level);
    expect(crumbs.every(wellFormed)).toBe(true);
    expect(crumbs.find((c) => c.category === 'console')?.level).toBe('error');
    // The SDK's own calls to the service are not breadcrumbs.
    expect(crumbs.some((c) => c.message.includes('/ingest/'))).toBe(false);
    await page.context().close();
  }, 60_000);
});
