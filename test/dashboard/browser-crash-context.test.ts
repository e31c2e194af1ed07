import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.ts';
import { type dashboardProject, type Account, listeningDashboard } from '../helpers/accounts.ts';
import { navigate, networkEvent, sessionStart, T0 } from '../helpers/payloads.ts';
import { release } from '../helpers/bundle.ts';
import {
  SHOTS,
  collectErrors,
  expectNoBadText,
  hasChromium,
  launchChromium,
  overflowX,
  settled,
  sizedContext,
  withSession,
} from '../helpers/browser.ts';

// The crash page's occurrence block in Chromium at 1280 and 390 px, fed hostile values in every
// field: markup stays text, long unbroken strings and right-to-left text stay in their boxes,
// the trail before the crash ends with the crash, the source lines of the mapped frame show.

describe.skipIf(!hasChromium)('crash context in Chromium', () => {
  let s: TestServer;
  let browser: Browser;
  let base: string;
  let account: Account;
  let projectId = '';
  let groupId = '';
  const errors: string[] = [];
  const bundle = release('https://shop.example.com/assets/index-8f3a2c.js', '8f3a2c');
  const MARKUP = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>';
  const LONG = 'unbroken'.repeat(24);
  const RTL = 'مرحبا بالعالم ‮abc';
  const MAP_NAME = '~/assets/index-8f3a2c.js.map';
  // runs in the page: the occurrence picker shows this position
  const atPosition = (text: string) => document.querySelector('#occurrence-position')?.textContent === text;

  async function open(width: number, height: number): Promise<Page> {
    const p = await (await withSession(await sizedContext(browser, width, height), account.cookie, base)).newPage();
    return collectErrors(p, errors);
  }

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    let p: Awaited<ReturnType<typeof dashboardProject>>;
    ({ s, base, account, project: p } = await listeningDashboard('Shop'));
    projectId = p.projectId;
    const up = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/projects/${projectId}/releases/7.0.0/artifacts?name=${encodeURIComponent(MAP_NAME)}`,
      headers: { ...account.headers, 'content-type': 'application/json' },
      payload: bundle.map,
    });
    expect(up.statusCode, up.body).toBe(201);
    const at = T0 + 60_000;
    const report = async (environment: string, timestamp: number, extra: Record<string, unknown>) => {
      const st = sessionStart({ userId: 'session-user' });
      st.device = { ...st.device, appVersion: '7.0.0' };
      const ingest = (url: string, payload: object) => s.app.inject({ method: 'POST', url, headers: p.auth, payload });
      expect((await ingest('/ingest/session', st)).statusCode).toBe(201);
      const events = [
        { ...navigate(st.sessionId, 1, `/checkout/${LONG}`), timestamp: timestamp - 4000 },
        { ...networkEvent(st.sessionId, 2, 503), timestamp: timestamp - 2000 },
      ];
      expect((await ingest('/ingest/events', { sessionId: st.sessionId, events })).statusCode).toBe(201);
      const r = await s.app.inject({
        method: 'POST',
        url: '/ingest/crash',
        headers: p.auth,
        payload: {
          sessionId: st.sessionId,
          message: 'Error: Order 1042 not found',
          stackTrace: bundle.stack,
          isFatal: true,
          handled: false,
          timestamp,
          environment,
          ...extra,
        },
      });
      expect(r.statusCode, r.body).toBe(201);
    };
    await report('staging', at - 600_000, {});
    await report('production', at, {
      userId: `${MARKUP}${LONG}`,
      tags: { screen: RTL, markup: MARKUP, long: LONG.slice(0, 200), 'bad key!': 'dropped' },
      context: { cart: { note: MARKUP, sku: LONG, rtl: RTL, items: 3 } },
      breadcrumbs: [
        { timestamp: at - 3000, category: 'console', message: MARKUP, level: 'error' },
        { timestamp: at - 1000, category: 'ui.click', message: LONG, level: 'info', data: { target: RTL } },
      ],
      environment: 'production',
    });
    const rows = await (await s.stores()).pg.query<{ id: string }>(
      'SELECT id FROM crash_groups WHERE project_id = $1',
      [projectId],
    );
    groupId = rows.rows[0]!.id;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  for (const [label, width, height] of [
    ['laptop', 1280, 800],
    ['phone', 390, 844],
  ] as const) {
    it(`${label} (${width} px): context, tags, dropped, timeline and source; hostile values as text`, async () => {
      const page = await open(width, height);
      await page.goto(`${base}/#/p/${projectId}/crashes/${groupId}`);
      await page.locator('#occurrence [data-occurrence]').waitFor();
      await settled(page);
      expect(await page.locator('#occurrence-position').textContent()).toBe('Occurrence 1 of 2');
      expect(await page.locator('#occ-env').textContent()).toBe('production');
      expect(await page.locator('#occ-user').textContent()).toBe(`${MARKUP}${LONG}`);
      // tags as chips, their text exactly as sent; the bad key is listed as dropped
      expect(await page.locator('li.chip[data-tag=screen] .chip-value').textContent()).toBe(RTL);
      expect(await page.locator('li.chip[data-tag=markup] .chip-value').textContent()).toBe(MARKUP);
      expect(await page.locator('.dropped').textContent()).toContain('tags');
      // context pretty-printed as text
      expect(JSON.parse((await page.locator('pre.context-json').textContent())!)).toEqual({
        cart: { note: MARKUP, sku: LONG, rtl: RTL, items: 3 },
      });
      // a right-to-left override in JSON is shown as its escape, so it cannot reorder the line
      expect(await page.locator('pre.context-json').textContent()).toContain('\\u202e');
      // one timeline: the session's events and the breadcrumbs in time order, the crash last
      const sources = await page
        .locator('ol.crash-trail > li')
        .evaluateAll((li) => li.map((x) => x.getAttribute('data-source')));
      expect(sources).toEqual(['event', 'breadcrumb', 'event', 'breadcrumb', 'crash']);
      expect(await page.locator('ol.crash-trail > li').nth(1).textContent()).toContain(MARKUP);
      // the source around the throwing line, from the map's sourcesContent
      const here = page.locator('.source-frame').first().locator('.src-here');
      expect(await here.textContent()).toContain("throw new Error('Order ' + id + ' not found')");
      // nothing the app sent ran or became markup
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(await page.locator('#occurrence img, #occurrence script').count()).toBe(0);
      await expectNoBadText(page, `${label} crash page`);
      expect(await overflowX(page)).toBe(0);
      for (const sel of ['pre.context-json', 'ul.chips', 'ol.crash-trail', '.occurrence-facts', '.source-frame']) {
        const box = await page.locator(sel).first().boundingBox();
        expect(box!.x + box!.width, sel).toBeLessThanOrEqual(width);
      }
      await page.screenshot({ path: path.join(SHOTS, `${label}-crash-context.png`), fullPage: true });
      await page.locator('#occurrence').screenshot({ path: path.join(SHOTS, `${label}-crash-occurrence.png`) });

      // a tag chip opens the crash list of the occurrences with that tag
      expect(await page.locator('li.chip[data-tag=markup] a').getAttribute('href')).toContain('tag=markup%3D');
      // the previous occurrence, then the environment filter
      await page.getByRole('button', { name: 'Older →' }).click();
      await page.waitForFunction(atPosition, 'Occurrence 2 of 2');
      expect(await page.locator('#occ-env').textContent()).toBe('staging');
      await page.locator('#crash-env').selectOption('staging');
      await page.waitForFunction(() => location.hash.includes('environment=staging'));
      await page.waitForFunction(atPosition, 'Occurrence 1 of 1');
      expect(await overflowX(page)).toBe(0);
      await page.context().close();
      expect(errors).toEqual([]);
    });
  }

  it('a tag chip leads to the crash list filtered by that tag', async () => {
    const page = await open(390, 844);
    await page.goto(`${base}/#/p/${projectId}/crashes/${groupId}`);
    await page.locator('li.chip[data-tag=screen] a').click();
    await page.waitForFunction(() => location.hash.includes('tag=screen'));
    await page.locator('table.crashes tbody tr').first().waitFor();
    expect(await page.locator('table.crashes tbody tr').count()).toBe(1);
    expect(await page.locator('p.active-tag code').textContent()).toBe(`screen=${RTL}`);
    expect(await overflowX(page)).toBe(0);
    await page.context().close();
    expect(errors).toEqual([]);
  });

  it('a spike rule on messages is made from the Alerts page', async () => {
    const page = await open(390, 844);
    await page.goto(`${base}/#/p/${projectId}/alerts`);
    await page.locator('#rule-form').waitFor();
    await page.locator('#rule-name').fill('Message storm');
    await page.locator('#rule-threshold').fill('10');
    await page.locator('#rule-levels').selectOption('warning,info');
    await page.locator('#rule-email-mode').selectOption('none');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.locator('#alert-rules tbody tr', { hasText: 'Message storm' }).waitFor();
    expect(await page.locator('#alert-rules tbody tr', { hasText: 'Message storm' }).textContent()).toContain(
      'warning, info reports',
    );
    const url = `/api/projects/${projectId}/alert-rules`;
    const rules = (await s.app.inject({ method: 'GET', url, headers: s.admin })).json().items;
    expect(rules.find((r: { name: string }) => r.name === 'Message storm').levels).toEqual(['warning', 'info']);

    await page.context().close();
    expect(errors).toEqual([]);
  });

  it('the crash list takes an environment and a messages filter', async () => {
    const page = await open(390, 844);
    await page.goto(`${base}/#/p/${projectId}/crashes`);
    await page.locator('table.crashes tbody tr').first().waitFor();
    await page.locator('#c-env').fill('nowhere');
    await page.locator('#c-env').press('Enter');
    await page.waitForFunction(() => location.hash.includes('environment=nowhere'));
    await page.locator('p.empty').waitFor();
    await page.locator('#c-kind').selectOption('message');
    await page.waitForFunction(() => location.hash.includes('kind=message'));
    await page.locator('p.empty').waitFor();
    expect(await overflowX(page)).toBe(0);
    await page.context().close();
    expect(errors).toEqual([]);
  });
});
