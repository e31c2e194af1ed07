import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.ts';
import { type dashboardProject, type Account, listeningDashboard } from '../helpers/accounts.ts';
import { sessionStart, T0 } from '../helpers/payloads.ts';
import {
  collectErrors,
  hasChromium,
  launchChromium,
  overflowX,
  settled,
  sizedContext,
  withSession,
} from '../helpers/browser.ts';

// A person merges crash groups on the crash page and edits fingerprint rules in the project's
// card, in Chromium at a phone's width (the narrower layout), over the real server.

describe.skipIf(!hasChromium)('merging and fingerprint rules in Chromium', () => {
  let s: TestServer;
  let browser: Browser;
  let base: string;
  let account: Account;
  let projectId = '';
  const ids: Record<string, string> = {};
  const errors: string[] = [];

  async function open(): Promise<Page> {
    const p = await (await withSession(await sizedContext(browser, 390, 844), account.cookie, base)).newPage();
    return collectErrors(p, errors);
  }

  beforeAll(async () => {
    let p: Awaited<ReturnType<typeof dashboardProject>>;
    ({ s, base, account, project: p } = await listeningDashboard('Shop'));
    projectId = p.projectId;
    let ts = T0 + 1_000;
    for (const [message, fn] of [
      ['TypeError: cart is null', 'renderCart'],
      ['TypeError: cart is undefined', 'loadCart'],
      ['RangeError: too deep', 'walk'],
    ]) {
      const st = sessionStart();
      await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st });
      const r = await s.app.inject({
        method: 'POST',
        url: '/ingest/crash',
        headers: p.auth,
        payload: {
          sessionId: st.sessionId,
          timestamp: ts++,
          isFatal: true,
          handled: false,
          message,
          stackTrace: `${message}\n    at ${fn} (https://shop.example/app.js:1:1)`,
        },
      });
      expect(r.statusCode).toBe(201);
    }
    const rows = await (await s.stores()).pg.query<{ id: string; message: string }>(
      'SELECT id, message FROM crash_groups WHERE project_id = $1',
      [projectId],
    );
    for (const r of rows.rows) ids[r.message] = r.id;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('merges a group picked on the crash page into the one shown, which then counts its crashes', async () => {
    const page = await open();
    await page.goto(`${base}/#/p/${projectId}/crashes/${ids['TypeError: cart is null']}`);
    await page.locator('details.merge summary').waitFor();
    await settled(page);
    await page.locator('details.merge summary').click();
    const box = page.getByRole('checkbox', { name: /TypeError: cart is undefined/ });
    await box.waitFor();
    expect(await page.getByRole('checkbox').count()).toBe(2);
    await box.check();
    await page.getByRole('button', { name: 'Merge into this group' }).click();
    await page.waitForFunction(() => document.querySelector('dl.facts')?.textContent?.includes('Occurrences2'));
    expect(await overflowX(page)).toBe(0);

    // the merged group left the list; its address shows the kept group
    await page.goto(`${base}/#/p/${projectId}/crashes`);
    await page.locator('table.crashes tbody tr').first().waitFor();
    await settled(page);
    expect(await page.locator('table.crashes tbody tr').count()).toBe(2);
    await page.goto(`${base}/#/p/${projectId}/crashes/${ids['TypeError: cart is undefined']}`);
    await page.locator('#merged-note').waitFor();
    expect(await page.locator('h1').textContent()).toBe('TypeError: cart is null');
    await page.context().close();
  });

  it("adds and deletes a fingerprint rule in the project's card", async () => {
    const page = await open();
    await page.goto(`${base}/#/projects`);
    const rules = page.locator('details.fingerprint-rules');
    await rules.locator('summary').waitFor();
    await rules.locator('summary').click();
    await rules.getByText('No rules').waitFor();
    await rules.getByLabel('Type').fill('ChunkLoadError');
    await rules.getByLabel('Message').fill('Loading chunk *');
    await rules.getByLabel(/Fingerprint/).fill('chunk-load');
    await rules.getByRole('button', { name: 'Add rule' }).click();
    await rules.locator('li[data-rule]').waitFor();
    expect(await rules.locator('li[data-rule]').textContent()).toContain(
      'type ChunkLoadError, message Loading chunk * → chunk-load',
    );
    const stored = (
      await s.app.inject({ method: 'GET', url: `/api/projects/${projectId}/fingerprint-rules`, headers: s.admin })
    ).json().items;
    expect(stored).toHaveLength(1);
    expect(await overflowX(page)).toBe(0);
    await rules.getByRole('button', { name: /Delete rule/ }).click();
    await rules.getByText('No rules').waitFor();
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
