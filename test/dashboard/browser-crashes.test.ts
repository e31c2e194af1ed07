import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.ts';
import { type dashboardProject, type Account, listeningDashboard } from '../helpers/accounts.ts';
import { sessionStart, T0 } from '../helpers/payloads.ts';
import { release } from '../helpers/bundle.ts';
import {
  SHOTS,
  hasChromium,
  launchChromium,
  overflowX,
  settled,
  sizedContext,
  withSession,
} from '../helpers/browser.ts';

// The crash list and page in Chromium at 1366 and 390 px: fatal crashes and handled errors told
// apart, the symbolicated stack with the raw one a toggle away, no sideways scroll on a phone.

describe.skipIf(!hasChromium)('crash pages in Chromium', () => {
  let s: TestServer;
  let browser: Browser;
  let base: string;
  let account: Account;
  let projectId = '';
  let fatalId = '';
  let unmappedId = '';
  let ingestAuth: { authorization: string } | null = null;
  const other = release('https://shop.example.com/assets/index-0ddba11.js', '0ddba11');
  const pageErrors: string[] = [];
  const bundle = release('https://shop.example.com/assets/index-8f3a2c.js', '8f3a2c');
  // a frame far wider than a phone: one unbroken URL
  const longFrame = `    at render (https://cdn.example.com/${'very-long-path-segment-'.repeat(12)}chunk.js:1:99)`;

  async function open(width: number, height: number): Promise<Page> {
    const p = await (await withSession(await sizedContext(browser, width, height), account.cookie, base)).newPage();
    p.on('pageerror', (e) => pageErrors.push(String(e)));
    return p;
  }

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    let p: Awaited<ReturnType<typeof dashboardProject>>;
    ({ s, base, account, project: p } = await listeningDashboard('Shop'));
    projectId = p.projectId;
    ingestAuth = p.auth;
    // the source map uploaded from the dashboard (session auth)
    const up = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/projects/${projectId}/releases/7.0.0/artifacts?name=${encodeURIComponent('~/assets/index-8f3a2c.js.map')}`,
      headers: { ...account.headers, 'content-type': 'application/json' },
      payload: bundle.map,
    });
    expect(up.statusCode, up.body).toBe(201);
    let ts = T0 + 1_000;
    const crash = async (device: Record<string, unknown>, c: Record<string, unknown>) => {
      const st = sessionStart();
      st.device = { ...st.device, appVersion: '7.0.0', ...device };
      await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st });
      const r = await s.app.inject({
        method: 'POST',
        url: '/ingest/crash',
        headers: p.auth,
        payload: { sessionId: st.sessionId, timestamp: ts++, isFatal: true, handled: false, ...c },
      });
      expect(r.statusCode).toBe(201);
    };
    await crash(
      { platform: 'windows' },
      { message: 'Error: Order 1042 not found', stackTrace: `${bundle.stack}\n${longFrame}` },
    );
    await crash(
      { platform: 'macos' },
      { message: 'Error: Order 7 not found', stackTrace: `${bundle.stack}\n${longFrame}` },
    );
    await crash(
      { platform: 'ios' },
      {
        message: 'Error: Payment declined',
        stackTrace: `Error: Payment declined\n${longFrame}`,
        isFatal: false,
        handled: true,
      },
    );
    // a release whose map nobody uploaded yet
    await crash(
      { platform: 'linux', appVersion: '8.0.0' },
      { message: 'Error: Order 3 not found', stackTrace: other.stack },
    );
    const groups = await (await s.stores()).pg.query<{ id: string; is_fatal: boolean; app_version: string }>(
      'SELECT id, is_fatal, app_version FROM crash_groups WHERE project_id = $1',
      [projectId],
    );
    fatalId = groups.rows.find((g) => g.is_fatal && g.app_version === '7.0.0')!.id;
    unmappedId = groups.rows.find((g) => g.app_version === '8.0.0')!.id;

    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  for (const [label, width, height] of [
    ['desktop', 1366, 768],
    ['phone', 390, 844],
  ] as const) {
    it(`${label} (${width} px): the list tells fatal crashes from handled errors and filters them`, async () => {
      const page = await open(width, height);
      await page.goto(`${base}/#/p/${projectId}/crashes`);
      await page.locator('table.crashes tbody tr').nth(1).waitFor();
      await settled(page);
      const text = (await page.locator('table.crashes').textContent())!;
      expect(text).toContain('Fatal crash');
      expect(text).toContain('Handled error');
      expect(await overflowX(page)).toBe(0);
      await page.screenshot({ path: path.join(SHOTS, `${label}-crashes-kinds.png`), fullPage: true });
      await page.locator('#c-kind').selectOption('fatal');
      await page.waitForFunction(() => location.hash.includes('kind=fatal'));
      await page.waitForFunction(() => document.querySelectorAll('table.crashes tbody tr').length === 2);
      expect(
        await page
          .locator('table.crashes tbody tr')
          .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind'))),
      ).toEqual(['fatal', 'fatal']);
      await page.locator('#c-sort').selectOption('occurrences');
      await page.waitForFunction(() => location.hash.includes('sort=occurrences'));

      // The search (message, type, function, file), from the whole list: one group names "Payment".
      await page.goto(`${base}/#/p/${projectId}/crashes`);
      await page.locator('table.crashes tbody tr').nth(2).waitFor();
      const rowCount = () => page.locator('table.crashes tbody tr').count();
      const all = await rowCount();
      await page.locator('#c-search').fill('payment');
      await page.locator('#c-search').press('Enter');
      await page.waitForFunction(() => location.hash.includes('q=payment'));
      await page.waitForFunction(() => document.querySelectorAll('table.crashes tbody tr').length === 1);
      expect(await page.locator('table.crashes tbody').textContent()).toContain('Payment declined');
      expect(await page.locator('#c-search').inputValue()).toBe('payment');
      expect(await overflowX(page)).toBe(0);
      await page.screenshot({ path: path.join(SHOTS, `${label}-crashes-search.png`), fullPage: true });
      await page.locator('#c-search').fill('');
      await page.locator('#c-search').press('Enter');
      await page.waitForFunction(() => !location.hash.includes('q='));
      await page.waitForFunction((n) => document.querySelectorAll('table.crashes tbody tr').length === n, all);
      expect(await rowCount()).toBe(all);
      await page.context().close();
    });

    it(`${label} (${width} px): the crash page shows the symbolicated stack, the raw one on a toggle, every platform, no sideways scroll`, async () => {
      const page = await open(width, height);
      await page.goto(`${base}/#/p/${projectId}/crashes/${fatalId}`);
      await page.locator('pre.stack').waitFor();
      await settled(page);
      const stack = page.locator('pre.stack');
      expect(await stack.getAttribute('data-view')).toBe('symbolicated');
      expect(await stack.textContent()).toContain('at findOrder (src/orders.ts:6:');
      expect((await page.locator('#platforms').textContent())!.split(', ').sort()).toEqual(['macos', 'windows']);
      expect(await page.locator('#by-model').textContent()).toContain('device');
      expect(await overflowX(page)).toBe(0);
      // the long frame wraps inside the box: the box is no wider than the page
      const box = await stack.boundingBox();
      expect(box!.width).toBeLessThanOrEqual(width);
      expect(await stack.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(1);
      await page.screenshot({ path: path.join(SHOTS, `${label}-crash-symbolicated.png`), fullPage: true });
      await page.getByRole('button', { name: 'Raw, as sent' }).click();
      expect(await stack.getAttribute('data-view')).toBe('raw');
      expect(await stack.textContent()).toContain('index-8f3a2c.js:1:');
      expect(await page.getByRole('button', { name: 'Raw, as sent' }).getAttribute('aria-pressed')).toBe('true');
      expect(await overflowX(page)).toBe(0);
      await page.getByRole('button', { name: 'Symbolicated' }).click();
      expect(await stack.textContent()).toContain('src/orders.ts');
      await page.context().close();
    });
  }

  it('desktop: app frames are shown, library frames folded behind a toggle; the text stays whole', async () => {
    const st = sessionStart();
    const ingest = ingestAuth;
    await s.app.inject({ method: 'POST', url: '/ingest/session', headers: ingest!, payload: st });
    const stackTrace = [
      "TypeError: Cannot read properties of undefined (reading 'total')",
      '    at priceCart (/srv/app/dist/cart.js:812:19)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:105:5)',
      '    at async Promise.all (index 0)',
      '    at checkout (/srv/app/dist/checkout.js:40:3)',
    ].join('\n');
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/crash',
      headers: ingest!,
      payload: {
        sessionId: st.sessionId,
        timestamp: T0 + 99_000,
        isFatal: true,
        handled: false,
        message: 'TypeError',
        stackTrace,
      },
    });
    expect(r.statusCode).toBe(201);
    const g = await (await s.stores()).pg.query<{ id: string }>(
      'SELECT id FROM crash_groups WHERE project_id = $1 AND stack_head LIKE $2',
      [projectId, '%priceCart%'],
    );
    const page = await open(1366, 768);
    await page.goto(`${base}/#/p/${projectId}/crashes/${g.rows[0]!.id}`);
    await page.locator('pre.stack').waitFor();
    await settled(page);
    expect(await page.locator('pre.stack .line.app').allTextContents()).toEqual([
      '    at priceCart (/srv/app/dist/cart.js:812:19)\n',
      '    at checkout (/srv/app/dist/checkout.js:40:3)',
    ]);
    expect(await page.locator('pre.stack .line.lib').first().isVisible()).toBe(false);
    expect(await page.locator('pre.stack .lib-fold').getAttribute('data-count')).toBe('2');
    expect(await page.locator('pre.stack').textContent()).toBe(stackTrace);
    await page.getByRole('button', { name: 'Library frames' }).click();
    expect(await page.locator('pre.stack .line.lib').first().isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Library frames' }).getAttribute('aria-pressed')).toBe('true');
    await page.context().close();
  });

  it('desktop: a source map uploaded from the crash page re-reads its stack', async () => {
    const page = await open(1366, 768);
    await page.goto(`${base}/#/p/${projectId}/crashes/${unmappedId}`);
    await page.locator('pre.stack').waitFor();
    await settled(page);
    expect(await page.locator('pre.stack').getAttribute('data-view')).toBe('raw');
    await page.getByText('Upload source maps or mapping.txt').click();
    expect(await page.locator('#up-release').inputValue()).toBe('8.0.0');
    await page
      .locator('#up-files')
      .setInputFiles({ name: 'index-0ddba11.js.map', mimeType: 'application/json', buffer: Buffer.from(other.map) });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.waitForFunction(() => document.querySelector('pre.stack')?.getAttribute('data-view') === 'symbolicated');
    expect(await page.locator('pre.stack').textContent()).toContain('at findOrder (src/orders.ts:6:');
    expect(await page.locator('.summary').textContent()).toContain('in findOrder (src/orders.ts:6:');
    await page.screenshot({ path: path.join(SHOTS, 'desktop-crash-uploaded.png'), fullPage: true });
    await page.context().close();
  });

  it('no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
