import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from './helpers/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = fs.existsSync(CHROMIUM);
const ARTIFACTS = path.resolve('test-artifacts');
if (!hasChromium) {
  console.warn(`browser tests skipped: ${CHROMIUM} is missing (install Debian's chromium: apt-get install -y chromium)`);
}

describe.skipIf(!hasChromium)(`dashboard in a real browser (Chromium at ${CHROMIUM})`, () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let base: string;
  const pageErrors: string[] = [];
  const shot = (name: string, p: Page = page) => p.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    s = await startTestServer({ RATE_LIMIT_AUTH_PER_MIN: '1000' });
    await s.app.listen({ host: '127.0.0.1', port: 0 });
    const addr = s.app.server.address();
    base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    // A failed fetch (the 401 of /api/auth/me before log-in) is logged by Chromium itself; only
    // script errors count.
    page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) pageErrors.push(m.text()); });
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('sign up, create a project, ingest with the shown key, see the badge and the timeline, resolve the crash', async () => {
    await page.goto(base);
    await page.getByRole('heading', { name: 'Log in to flightrec' }).waitFor();
    await shot('01-login');
    await page.getByRole('link', { name: 'Create an account' }).click();
    const email = `browser-${Date.now()}@example.com`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create account' }).click();

    await page.getByRole('heading', { name: 'Projects & keys' }).waitFor();
    await page.getByLabel('Name').fill('Shop iOS');
    await page.getByRole('button', { name: 'Create project' }).click();
    const keyEl = page.getByTestId('new-key').first();
    await keyEl.waitFor();
    const apiKey = (await keyEl.textContent())!.trim();
    expect(apiKey).toMatch(/^frk_[0-9A-Za-z]{38}$/);
    await shot('02-project-created');

    // The app, with the key copied from the page.
    const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const post = async (p: string, body: object) => {
      const r = await fetch(base + p, { method: 'POST', headers: auth, body: JSON.stringify(body) });
      expect(r.status, `${p}: ${await r.clone().text()}`).toBeLessThan(300);
    };
    const sessionId = crypto.randomUUID();
    const t = Date.now() - 60_000;
    await post('/ingest/session', {
      sessionId, startedAt: t, userId: 'alice',
      device: { platform: 'ios', osVersion: '17.4', model: 'iPhone15,2', brand: 'Apple', appVersion: '2.1.0', networkType: 'wifi', locale: 'en-GB', timezone: 'Europe/London', screenWidth: 393, screenHeight: 852 },
    });
    const ev = (seq: number, e: object) => ({ sessionId, sequenceNumber: seq, timestamp: t + 1000 * (seq + 1), ...e });
    await post('/ingest/events', {
      sessionId,
      events: [
        ev(0, { type: 'navigate', from: null, to: '/home' }),
        ev(1, { type: 'tap', x: 120, y: 640, target: 'checkout-button' }),
        ev(2, { type: 'navigate', from: '/home', to: '/checkout' }),
        ev(3, { type: 'network', method: 'POST', url: 'https://api.shop.example/orders', statusCode: 500, duration: 840, error: null }),
        ev(4, { type: 'custom', name: 'payment_failed', properties: { provider: 'card' } }),
      ],
    });
    await post('/ingest/network', { sessionId, requests: [{ id: crypto.randomUUID(), method: 'GET', url: 'https://api.shop.example/cart', statusCode: 200, duration: 95, timestamp: t + 1500 }] });
    await post('/ingest/crash', {
      sessionId, message: 'NSInvalidArgumentException: nil order id', isFatal: true, handled: false, timestamp: t + 4500,
      stackTrace: 'at OrderView.submit (OrderView.swift:88)\nat Button.tap (UIKit)\nat main (main.swift:1)',
    });
    await post('/ingest/session/end', { sessionId, endedAt: t + 6000 });

    await page.getByRole('link', { name: 'Go to its sessions →' }).click();
    const row = page.locator(`tr[data-session="${sessionId}"]`);
    await row.waitFor();
    // The badge is on the page and shown (a locator object is always truthy: test what it finds).
    const warning = row.getByText('⚠ network errors');
    await warning.waitFor({ state: 'visible', timeout: 5_000 });
    expect(await warning.count()).toBe(1);
    expect(await row.locator('.badge-warn').textContent()).toContain('network errors');
    expect(await row.locator('.badge-bad').first().textContent()).toBe('crashed');
    expect(await row.textContent()).toContain('2.1.0');
    await page.locator('figure.chart-box svg rect.bar-all').first().waitFor({ state: 'attached' });
    await shot('03-sessions');

    // keyboard: the session link is reachable and opens with Enter
    await row.getByRole('link').focus();
    await page.keyboard.press('Enter');
    await page.locator('ol.timeline li.tl').first().waitFor();
    const items = await page.locator('ol.timeline li.tl').evaluateAll((els) => els.map((e) => e.className.split(' ').find((c: string) => c.startsWith('tl-') && c !== 'tl-failed')));
    expect(items).toEqual(['tl-navigate', 'tl-tap', 'tl-navigate', 'tl-network', 'tl-crash', 'tl-custom']);
    expect(await page.locator('li.tl-failed').count()).toBe(1);
    expect(await page.locator('li.tl-failed').textContent()).toContain('https://api.shop.example/orders');
    await page.locator('table.network tr.failed').waitFor();
    expect(await page.locator('table.network tbody tr').count()).toBe(2);
    await shot('04-timeline');

    await page.getByRole('link', { name: 'Open crash group →' }).click();
    await page.getByRole('heading', { name: 'NSInvalidArgumentException: nil order id' }).waitFor();
    expect(await page.locator('[data-status]').getAttribute('data-status')).toBe('open');
    // open → resolved in one step
    await page.getByRole('button', { name: 'Resolve' }).click();
    await page.locator('[data-status="resolved"]').waitFor();
    expect(await page.getByRole('button', { name: 'Reopen' }).count()).toBe(1);
    await shot('05-crash-resolved');
    const projectId = await page.evaluate(() => localStorage.getItem('flightrec:project'));
    const g = await s.svc.stores.pg.query<{ status: string }>('SELECT status FROM crash_groups WHERE project_id = $1', [projectId]);
    expect(g.rows.map((r) => r.status)).toEqual(['resolved']);

    await page.getByRole('link', { name: '← Crashes' }).click();
    await page.locator('table.crashes tbody tr').first().waitFor();
    expect(await page.locator('table.crashes tbody tr .badge').first().textContent()).toBe('resolved');

    // the same session on a phone-sized screen, same cookie
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2,
      storageState: await page.context().storageState() });
    await phone.goto(`${base}/#/p/${projectId}/sessions`);
    await phone.locator(`tr[data-session="${sessionId}"] .badge-warn`).waitFor();
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await shot('06-phone-sessions', phone);
    await phone.close();

    await page.getByRole('link', { name: 'Team' }).click();
    await page.locator('ul.members li').first().waitFor();
    expect(await page.locator('ul.members').textContent()).toContain(email);
    await shot('07-team');

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in to flightrec' }).waitFor();
    expect(pageErrors).toEqual([]);
  });
});
