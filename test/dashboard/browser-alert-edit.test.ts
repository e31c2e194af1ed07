import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startReceiver } from '../helpers/webhookReceiver.ts';
import { addMember, dashboardProject, signup, type Account } from '../helpers/accounts.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  SHOTS,
  hasChromium,
  launchChromium,
  overflowX,
  settled,
  sizedContext,
  withSession,
} from '../helpers/browser.ts';

// The everyday edges of the dashboard in Chromium at 1280 and 390 px: an alert rule edited in
// place, a regression rule made from the form, a webhook's test delivery through the outbox, and
// keys with scopes made by role (the owner an export key, a member an upload key, never export).

describe.skipIf(!hasChromium)('editing rules, testing webhooks, making scoped keys (Chromium)', () => {
  let s: TestServer;
  let browser: Browser;
  let owner: Account;
  let member: Account;
  let base = '';
  let projectId = '';
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let receiverUrl = '';
  const errors: string[] = [];

  beforeAll(async () => {
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
    owner = await signup(s);
    member = await signup(s);
    await addMember(s, owner, member);
    projectId = (await dashboardProject(s, owner, 'Edges app')).projectId;
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
    await rx?.close();
  });

  async function open(
    who: Account,
    width: number,
    height: number,
    hash: string,
  ): Promise<[BrowserContext, import('playwright-core').Page]> {
    const ctx = await withSession(await sizedContext(browser, width, height), who.cookie, base);
    const p = await ctx.newPage();
    p.on('pageerror', (e) => errors.push(String(e)));
    await p.goto(`${base}/${hash}`);
    await settled(p);
    return [ctx, p];
  }

  for (const [label, width, height] of [
    ['desktop', 1280, 800],
    ['phone', 390, 844],
  ] as const) {
    it(`edits a rule, makes a regression rule and sends a test delivery at ${width} px`, async () => {
      const dash = (method: 'POST', url: string, payload: object) =>
        s.app.inject({ method, url: `/api/dashboard/projects/${projectId}${url}`, headers: owner.headers, payload });
      const hook = (await dash('POST', '/webhooks', { url: `${receiverUrl}?${label}` })).json();
      const rule = (
        await dash('POST', '/alert-rules', { name: `Storm ${label}`, kind: 'spike', threshold: 5, emails: [] })
      ).json();
      const [ctx, p] = await open(owner, width, height, `#/p/${projectId}/alerts`);
      await p.locator('#alert-rules tbody tr').first().waitFor();

      await p.getByRole('button', { name: `Edit the rule Storm ${label}` }).click();
      await p.locator(`#rule-form[data-editing="${rule.id}"]`).waitFor();
      expect(await p.locator('#rule-threshold').inputValue()).toBe('5');
      await p.locator('#rule-name').fill(`Big storm ${label}`);
      await p.locator('#rule-threshold').fill('25');
      await p.getByRole('button', { name: 'Save rule' }).click();
      const row = p.locator(`#alert-rules tr[data-rule="${rule.id}"]`);
      await row.filter({ hasText: `Big storm ${label}` }).waitFor();
      expect(await row.innerText()).toContain('passes 25 occurrences');

      await p.locator('#rule-name').fill(`Rollout ${label}`);
      await p.locator('#rule-kind').selectOption('crash_free_regression');
      expect(await p.locator('#rule-threshold').inputValue()).toBe('0');
      expect(await p.locator('label[for="rule-threshold"]').innerText()).toContain('Gap between the 95 % intervals');
      await p.locator('#rule-email-mode').selectOption('none');
      await p.getByRole('button', { name: 'Add rule' }).click();
      await p.locator('#alert-rules tbody tr', { hasText: `Rollout ${label}` }).waitFor();
      expect(await p.locator('#alert-rules tbody tr', { hasText: `Rollout ${label}` }).innerText()).toContain(
        'significantly below the previous release',
      );

      await p.getByRole('button', { name: `Send a test delivery to ${receiverUrl}?${label}` }).click();
      await p.locator('.test-note', { hasText: 'queued' }).waitFor();
      await waitFor('the test delivery', async () => {
        await s.worker!.worker.runDue();
        return rx.got.map((x) => x.body).find((b) => b.includes('"webhook.test"') && b.includes(hook.id));
      });
      await p.locator('#deliveries-refresh').click();
      await p
        .locator('#webhook-deliveries tbody tr', { hasText: 'webhook.test' })
        .filter({ hasText: 'delivered' })
        .first()
        .waitFor();
      await settled(p);
      expect(await overflowX(p), `${label}: sideways scroll`).toBeLessThanOrEqual(0);
      await p.screenshot({ path: path.join(SHOTS, `alerts-edit-${label}.png`), fullPage: width > 600 });
      await ctx.close();
    }, 60_000);

    it(`makes keys with scopes by role at ${width} px, each shown once`, async () => {
      const who = label === 'desktop' ? owner : member;
      const [ctx, p] = await open(who, width, height, '#/projects');
      const card = p.locator('article.project', { hasText: 'Edges app' });
      await card.waitFor();
      // where alerts go when the recipients list is empty: the team's members, not ALERT_EMAIL_TO
      expect(await card.innerText()).toContain('Empty: every member of the team');
      expect(await card.innerText()).not.toContain('ALERT_EMAIL_TO');
      const exportBox = card.locator('input[type=checkbox][value=export]');
      const uploadBox = card.locator('input[type=checkbox][value=upload]');
      if (who === owner) {
        expect(await exportBox.isDisabled()).toBe(false);
        await exportBox.check();
        await card.locator('input[type=checkbox][value=ingest]').uncheck();
      } else {
        // a member cannot give the export scope
        expect(await exportBox.isDisabled()).toBe(true);
        expect(await card.innerText()).toContain('Export keys are made by the team’s owner.');
        await uploadBox.check();
        await card.locator('input[type=checkbox][value=ingest]').uncheck();
      }
      await card.getByLabel(/^New key/).fill(`key ${label}`);
      await card.getByRole('button', { name: 'Create key' }).click();
      const shown = card.locator('[data-testid=new-key]');
      await shown.waitFor();
      const plaintext = (await shown.innerText()).trim();
      expect(plaintext).toMatch(/^frk_/);
      const keyRow = card.locator('table.keys tbody tr', { hasText: `key ${label}` });
      expect(await keyRow.locator('td[data-label=Scopes]').innerText()).toBe(who === owner ? 'export' : 'upload');
      expect(await card.innerText()).toContain(who === owner ? 'Scopes: export' : 'Scopes: upload');
      await p.reload();
      await card.waitFor();
      expect(await p.content()).not.toContain(plaintext);
      expect(await overflowX(p), `${label}: sideways scroll`).toBeLessThanOrEqual(0);
      await p.screenshot({ path: path.join(SHOTS, `keys-scopes-${label}.png`), fullPage: width > 600 });
      await ctx.close();
    }, 60_000);
  }

  it('raised no script error', () => {
    expect(errors).toEqual([]);
  });
});
