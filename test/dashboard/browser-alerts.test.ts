import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startReceiver } from '../helpers/webhookReceiver.ts';
import { dashboardProject, PASSWORD, signup, type Account } from '../helpers/accounts.ts';
import { crash, sessionStart } from '../helpers/payloads.ts';
import { waitFor } from '../helpers/wait.ts';
import { CHROMIUM, SHOTS, hasChromium, launchChromium, overflowX, sizedContext } from '../helpers/browser.ts';

// Issue 22: a crash link (the alert email's) opened signed out lands on that crash after
// sign-in; the Alerts page creates a webhook and a rule and shows the delivery log.
const SIZES = [
  { name: 'desktop', width: 1366, height: 768 },
  { name: 'phone', width: 390, height: 844 },
] as const;

describe.skipIf(!hasChromium)(`links that land, and the Alerts page (Chromium at ${CHROMIUM})`, () => {
  let s: TestServer;
  let browser: Browser;
  let base: string;
  let account: Account;
  let projectId = '';
  let groupId = '';
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let receiverUrl = '';

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    rx = await startReceiver();
    receiverUrl = `${rx.url}/hook`;
    // The receiver is on loopback: private destinations are allowed for this server only.
    s = await startTestServer({
      WEBHOOK_ALLOW_PRIVATE: 'true',
      RATE_LIMIT_AUTH_PER_MIN: '1000',
      RUN_WORKER: 'true',
      OUTBOX_POLL_MS: '100',
      ALERT_RULES_INTERVAL_MS: '86400000',
    });
    base = await s.listen();
    s.env.PUBLIC_URL = base;

    account = await signup(s);
    const p = await dashboardProject(s, account, 'Links app');
    projectId = p.projectId;
    const st = sessionStart({ startedAt: Date.now() - 60_000 });
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st })).statusCode,
    ).toBe(201);
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: '/ingest/crash',
          headers: p.auth,
          payload: crash(st.sessionId, { message: 'Link target crash', timestamp: Date.now() - 1000 }),
        })
      ).statusCode,
    ).toBe(201);
    groupId = (
      await (
        await s.stores()
      ).pg.query<{ id: string }>('SELECT id FROM crash_groups WHERE project_id = $1', [projectId])
    ).rows[0]!.id;

    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
    await rx?.close();
  });

  for (const size of SIZES) {
    it(`signed out → crash link → sign in → lands on the crash (${size.width} px)`, async () => {
      const ctx = await sizedContext(browser, size.width, size.height);
      const page = await ctx.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      const link = `${base}/#/p/${projectId}/crashes/${groupId}`;
      await page.goto(link);
      await page.getByRole('heading', { name: 'Log in to flightrec' }).waitFor();
      // the wanted route rides along in the URL, so a reload or a detour to sign-up keeps it
      expect(new URL(page.url()).hash).toBe(
        `#/login?next=${encodeURIComponent(`#/p/${projectId}/crashes/${groupId}`)}`,
      );
      await page.reload();
      await page.getByRole('heading', { name: 'Log in to flightrec' }).waitFor();
      await page.getByLabel('Email').fill(account.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Link target crash' }).waitFor();
      expect(new URL(page.url()).hash).toBe(`#/p/${projectId}/crashes/${groupId}`);
      expect(await overflowX(page)).toBeLessThanOrEqual(0);
      await page.screenshot({ path: path.join(SHOTS, `alerts-${size.name}-crash-link-landed.png`) });
      expect(errors).toEqual([]);
      await ctx.close();
    }, 60_000);
  }

  it('a link to the sign-in page itself, or to another site, does not become the place to land', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    const page = await ctx.newPage();
    await page.goto(`${base}/#/login?next=${encodeURIComponent('https://evil.example/')}`);
    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForFunction(() => !location.hash.startsWith('#/login'));
    expect(page.url().startsWith(base)).toBe(true);
    expect(new URL(page.url()).hash).not.toContain('evil');
    await ctx.close();
  }, 60_000);

  for (const size of SIZES) {
    it(`the Alerts page: a webhook (secret once), a rule, the delivery log (${size.width} px)`, async () => {
      const ctx = await sizedContext(browser, size.width, size.height);
      const page = await ctx.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`${base}/#/p/${projectId}/alerts`);
      await page.getByLabel('Email').fill(account.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Alerts', level: 1 }).waitFor();

      await page.locator('#webhook-url').fill(`${receiverUrl}?${size.name}`);
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const secret = (await page.locator('#webhook-secret code.key').textContent())!.trim();
      expect(secret).toMatch(/^whsec_/);
      await page.locator('#webhooks tbody tr').first().waitFor();

      await page.locator('#rule-name').fill(`Any crash ${size.name}`);
      await page.locator('#rule-threshold').fill('1');
      await page.locator('#rule-email-mode').selectOption('none');
      await page.locator('#rule-form input[name="rule-webhook"]').last().check();
      await page.getByRole('button', { name: 'Add rule' }).click();
      await page.locator('#alert-rules tbody tr', { hasText: `Any crash ${size.name}` }).waitFor();
      // the secret is not on the page any more after a reload
      await page.reload();
      await page.locator('#alert-rules tbody tr').first().waitFor();
      expect(await page.content()).not.toContain(secret);

      expect(await s.worker!.rules!.evaluate()).toBeGreaterThanOrEqual(1);
      await waitFor('the delivery', async () => {
        await s.worker!.worker.runDue();
        return rx.got.some(({ body: b }) => b.includes(`Any crash ${size.name}`));
      });
      await page.locator('#deliveries-refresh').click();
      await page.locator('#webhook-deliveries tbody tr', { hasText: 'delivered' }).first().waitFor();
      await page.screenshot({ path: path.join(SHOTS, `alerts-${size.name}-alerts-page.png`), fullPage: true });
      const wide = await page.evaluate(() =>
        [...document.querySelectorAll('main *')]
          .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
          .slice(0, 5)
          .map((e) => `${e.tagName}.${e.className}#${e.id}`),
      );
      expect(wide).toEqual([]);
      expect(await overflowX(page)).toBeLessThanOrEqual(0);
      expect(errors).toEqual([]);
      await ctx.close();
    }, 60_000);
  }
});
