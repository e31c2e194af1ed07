// The core entry in Chromium, with and without the page hand-off of `@flightrec/sdk/browser`:
// the built ES modules loaded by a page of another origin, as a bundle that imports only
// `@flightrec/sdk/core` (and `/browser`) would run them. The default entry's page behaviour is
// covered by test/sdk-browser.test.ts.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from '../../test/helpers/browser.ts';
import { startTestServer, type TestServer } from '../../test/helpers/server.ts';
import { waitFor } from '../../test/helpers/wait.ts';

type Core = typeof import('../src/core.ts');
type BrowserParts = typeof import('../src/browser.ts');
type Win = { core: Core; parts: BrowserParts; loaded?: boolean };

describe.skipIf(!hasChromium)('@flightrec/sdk/core in Chromium', () => {
  let s: TestServer;
  let service: string;
  let pages: http.Server;
  let origin: string;
  let browser: Browser;
  let buildDir: string;

  beforeAll(async () => {
    buildDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-sdk-core-web-'));
    const sdk = path.resolve(import.meta.dirname, '..');
    const built = spawnSync(process.execPath, [path.join(sdk, 'scripts/build.mjs'), buildDir], { encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    s = await startTestServer({ RATE_LIMIT_INGEST_PER_MIN: '100000' });
    await s.app.listen({ host: '127.0.0.1', port: 0 });
    service = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`;
    pages = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname.startsWith('/sdk/')) {
        const file = path.join(buildDir, 'esm', path.basename(url.pathname));
        if (!fs.existsSync(file)) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'text/javascript' });
        return void res.end(fs.readFileSync(file));
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        url.pathname === '/other'
          ? '<!doctype html><title>other</title>'
          : '<!doctype html><title>app</title><script type="module">import * as core from "/sdk/core.js"; import * as parts from "/sdk/browser.js"; Object.assign(window, { core, parts, loaded: true });</script>',
      );
    });
    await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => (pages ? pages.close(() => r()) : r()));
    await s?.close();
    if (buildDir) fs.rmSync(buildDir, { recursive: true, force: true });
  });

  async function exported<T>(apiKey: string, route: string): Promise<T[]> {
    await s.settled(); // over the socket, not inject: what was acknowledged is loaded first
    const r = await fetch(`${service}${route}${route.includes('?') ? '&' : '?'}limit=1000`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(r.status).toBe(200);
    return ((await r.json()) as { data: T[] }).data;
  }
  const sessions = (k: string) => exported<{ id: string; status: string }>(k, '/export/sessions');
  const events = (k: string, sid: string) => exported<{ sequenceNumber: number }>(k, `/export/events?sessionId=${sid}`);

  /** A page that starts the core client (with the hand-off or not), a session and 20 events, none sent yet. */
  async function appWith(apiKey: string, handOff: boolean): Promise<{ page: Page; sid: string }> {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => (window as unknown as Win).loaded === true);
    const sid = await page.evaluate(
      async ({ apiKey, endpoint, handOff }) => {
        const { core, parts } = window as unknown as Win;
        const c = core.init({ apiKey, endpoint }, handOff ? { page: parts.pageHandOff } : {});
        const id = core.startSession();
        while (c.stats().sentBatches < 1) await new Promise((r) => setTimeout(r, 20));
        for (let i = 0; i < 20; i++) core.trackCustom('step', { i });
        return id ?? '';
      },
      { apiKey, endpoint: service, handOff },
    );
    return { page, sid };
  }

  it('with pageHandOff: leaving the page sends the events and ends the session', async () => {
    const { apiKey } = await s.createProject('core with hand-off');
    const { page, sid } = await appWith(apiKey, true);
    await page.goto(`${origin}/other`);
    await waitFor(
      'the events and the end',
      async () => (await events(apiKey, sid)).length === 20 && (await sessions(apiKey))[0]?.status === 'completed',
      15_000,
      250,
    );
    await page.context().close();
  }, 60_000);

  it('without it: the events still go out with keepalive, the session is left to the app (not ended)', async () => {
    const { apiKey } = await s.createProject('core alone');
    const { page, sid } = await appWith(apiKey, false);
    await page.goto(`${origin}/other`);
    await waitFor('the events', async () => (await events(apiKey, sid)).length === 20, 15_000, 250);
    expect((await sessions(apiKey)).map((x) => x.status)).toEqual(['active']);
    // Nothing was handed to the next page load.
    expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('flightrec.')))).toEqual([]);
    await page.context().close();
  }, 60_000);
});
