import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext } from 'playwright-core';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { dashboardProject, signup, type Account } from './helpers/accounts.ts';
import { crash, sessionStart } from './helpers/payloads.ts';
import { SHOTS, expectNoBadText as noBadText, hasChromium, launchChromium, overflowX, settled, sizedContext, withSession } from './helpers/browser.ts';

// The Releases page and a crash group's activity in Chromium, at 1366 and 390 px: two releases
// fed through the real ingestion API, one of them bad; the figures, trend charts and compare
// view read right, and the group page shows its chart, badge, history, assignee and comments.


describe.skipIf(!hasChromium)('Releases page and crash group activity in Chromium', () => {
  let s: TestServer;
  let browser: Browser;
  let owner: Account;
  let base = '';
  let projectId = '';
  let groupId = '';
  let manyId = '';
  const errors: string[] = [];
  const at = Date.now() - 2 * 3_600_000;

  async function context(width: number, height: number): Promise<BrowserContext> {
    return withSession(await sizedContext(browser, width, height), owner.cookie, base);
  }
  async function open(ctx: BrowserContext, hash: string) {
    const p = await ctx.newPage();
    p.on('pageerror', (e) => errors.push(String(e)));
    await p.goto(`${base}/${hash}`);
    await settled(p);
    return p;
  }

  beforeAll(async () => {
    s = await startTestServer({ RATE_LIMIT_AUTH_PER_MIN: '1000' });
    await s.app.listen({ host: '127.0.0.1', port: 0 });
    const addr = s.app.server.address();
    base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    owner = await signup(s);
    const p = await dashboardProject(s, owner);
    projectId = p.projectId;
    const post = async (url: string, payload: object) => {
      const r = await s.app.inject({ method: 'POST', url, headers: p.auth, payload });
      expect(r.statusCode, r.body).toBeLessThan(300);
    };
    // 1.0: six users, no crash; 2.0: four sessions, two of them crash (the bad release)
    for (let i = 0; i < 10; i++) {
      const v = i < 6 ? '1.0' : '2.0';
      const start = sessionStart({ startedAt: at + i * 1000, userId: `user-${i}`, device: { ...sessionStart().device, appVersion: v } });
      await post('/ingest/session', start);
      if (i >= 8) await post('/ingest/crash', crash(start.sessionId, { timestamp: at + i * 1000 + 500, message: 'TypeError: cart is empty' }));
    }
    // another project with 53 releases, one session each in the same hour (so listed by version): two pages of 50
    const many = await dashboardProject(s, owner, 'Many releases');
    manyId = many.projectId;
    for (let i = 0; i < 53; i++) {
      const start = sessionStart({ startedAt: at, userId: `many-${i}`, device: { ...sessionStart().device, appVersion: `3.${String(i).padStart(2, '0')}` } });
      const r = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: many.auth, payload: start });
      expect(r.statusCode, r.body).toBeLessThan(300);
    }
    const groups = await s.app.inject({ method: 'GET', url: `/api/dashboard/projects/${projectId}/crash-groups`, headers: owner.headers });
    groupId = groups.json().data[0].id;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  for (const [label, width, height] of [['desktop', 1366, 768], ['phone', 390, 844]] as const) {
    it(`reads the Releases page at ${width} px: figures, trend, compare, no sideways scroll`, async () => {
      const ctx = await context(width, height);
      const p = await open(ctx, `#/p/${projectId}/releases`);
      await p.locator('table.releases tbody tr').first().waitFor();
      const rows = p.locator('table.releases tbody tr');
      expect(await rows.count()).toBe(2);
      const bad = p.locator('tr[data-release="2.0|ios"]');
      expect(await bad.locator('td[data-label="Sessions"]').innerText()).toBe('4');
      expect(await bad.locator('td[data-label="Crash-free sessions"]').innerText()).toBe('50%');
      expect(await bad.locator('td[data-label="Crash-free users"]').innerText()).toBe('50%');
      expect(await bad.locator('td[data-label="New groups"]').innerText()).toBe('1');
      const good = p.locator('tr[data-release="1.0|ios"]');
      expect(await good.locator('td[data-label="Crash-free sessions"]').innerText()).toBe('100%');
      expect(await good.locator('td[data-label="Adoption 24 h"]').innerText()).toBe('60%');
      expect(await p.locator('.release-charts svg.chart').count()).toBe(2);
      // the compare view: A = the second most used (2.0), B = the most used (1.0)
      await p.locator('#release-compare table.compare').waitFor();
      expect(await p.locator('#release-compare tr[data-figure="crashFreeSessions"]').innerText()).toMatch(/50%\s+100%\s+\+50 pts/);
      await p.getByLabel('Release A').selectOption('1.0|ios');
      await p.waitForFunction(() => /100%\s*100%\s*0 pts/.test(document.querySelector('#release-compare tr[data-figure="crashFreeSessions"]')?.textContent ?? ''));
      await settled(p);
      expect(await overflowX(p), `${label}: sideways scroll`).toBeLessThanOrEqual(0);
      await noBadText(p, `${label} releases`);
      await p.screenshot({ path: path.join(SHOTS, `releases-${label}.png`), fullPage: width > 600 });
      await ctx.close();
    });

    it(`pages through more than 50 releases at ${width} px`, async () => {
      const ctx = await context(width, height);
      const p = await open(ctx, `#/p/${manyId}/releases`);
      const rows = p.locator('table.releases tbody tr');
      await rows.first().waitFor();
      expect(await rows.count()).toBe(50);
      expect(await rows.first().getAttribute('data-release')).toBe('3.00|ios');
      expect(await p.locator('main p.hint').first().innerText()).toMatch(/^53 releases/);
      const pages = p.getByRole('navigation', { name: 'Release pages' });
      expect(await pages.innerText()).toContain('of 2');
      await pages.getByRole('link', { name: 'Next →' }).click();
      await p.waitForFunction(() => location.hash.includes('page=2'));
      // the table is drawn anew after the address changes: wait for the new page's rows
      await p.locator('table.releases tbody tr[data-release="3.50|ios"]').waitFor();
      await settled(p);
      expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-release')))).toEqual(['3.50|ios', '3.51|ios', '3.52|ios']);
      // the compare view picks among this page's releases
      expect(await p.getByLabel('Release A').locator('option').count()).toBe(3);
      await p.locator('#release-compare table.compare').waitFor();
      await settled(p);
      expect(await overflowX(p), `${label}: sideways scroll`).toBeLessThanOrEqual(0);
      await noBadText(p, `${label} releases page 2`);
      // each release here has one session a day: no chart repeats a value on its axis ("0 / 1 / 1")
      const axes = await p.locator('.release-charts svg').evaluateAll((svgs) =>
        svgs.map((svg) => [...svg.querySelectorAll('text.axis[text-anchor="end"]')].map((t) => t.textContent)));
      expect(axes.length).toBeGreaterThan(0);
      for (const values of axes) expect(new Set(values).size, `axis ${values.join(' / ')}`).toBe(values.length);
      await p.screenshot({ path: path.join(SHOTS, `releases-page-2-${label}.png`), fullPage: width > 600 });
      await pages.getByRole('link', { name: '← Previous' }).click();
      await p.waitForFunction(() => location.hash.includes('page=1'));
      await p.locator('table.releases tbody tr[data-release="3.00|ios"]').waitFor();
      await settled(p);
      expect(await rows.count()).toBe(50);
      await ctx.close();
    });

    it(`reads a crash group's chart, badge, history, assignee and comments at ${width} px`, async () => {
      const ctx = await context(width, height);
      const p = await open(ctx, `#/p/${projectId}/crashes/${groupId}`);
      await p.locator('#group-activity-chart').waitFor();
      expect(await p.locator('#group-activity-chart').getAttribute('data-total')).toBe('2');
      expect(await p.locator('#group-badge').innerText()).toBe('New');
      expect(await p.locator('#group-releases').innerText()).toMatch(/First release seen: 2\.0 · last release seen: 2\.0/);
      await p.getByRole('button', { name: 'Last 24 hours' }).click();
      await p.waitForFunction(() => document.querySelectorAll('#group-activity-chart svg > g').length === 24);
      expect(await p.locator('#group-activity-chart').getAttribute('data-total')).toBe('2');
      if (label === 'desktop') {
        await p.locator('button[data-to="acknowledged"]').click();
        await p.locator('ol.history li[data-kind="status"]').first().waitFor();
        expect(await p.locator('ol.history li').first().innerText()).toContain(`${owner.email}: open → acknowledged`);
        await p.getByLabel('Assigned to').selectOption({ label: owner.email });
        await p.locator('ol.history li[data-kind="assignee"]').waitFor();
        await p.getByLabel('Add a comment').fill('Bad in 2.0, looking at it.');
        await p.getByRole('button', { name: 'Comment' }).click();
        await p.locator('ol.comments li', { hasText: 'Bad in 2.0, looking at it.' }).waitFor();
      } else {
        await p.locator('ol.comments li').first().waitFor();
        expect(await p.getByLabel('Assigned to').locator('option:checked').innerText()).toBe(owner.email);
      }
      await settled(p);
      const wide = await p.evaluate(() => [...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map((e) => e.tagName + '.' + e.className + '#' + e.id).slice(0, 5));
      expect(await overflowX(p), `${label}: sideways scroll (${wide.join(', ')})`).toBeLessThanOrEqual(0);
      await noBadText(p, `${label} crash group`);
      await p.screenshot({ path: path.join(SHOTS, `crash-group-activity-${label}.png`), fullPage: width > 600 });
      await ctx.close();
    });
  }

  it('raised no script error', () => {
    expect(errors).toEqual([]);
  });
});
