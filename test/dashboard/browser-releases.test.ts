import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { dashboardProject, signup, verificationToken, type Account } from '../helpers/accounts.ts';
import { crash, sessionStart } from '../helpers/payloads.ts';
import {
  SHOTS,
  expectNoBadText as noBadText,
  hasChromium,
  launchChromium,
  overflowX,
  settled,
  sizedContext,
  withSession,
} from '../helpers/browser.ts';

// The Releases page and a crash group's activity in Chromium, at 1280 and 390 px: two releases
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
  let handledId = '';
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
    base = await s.listen();
    owner = await signup(s);
    const p = await dashboardProject(s, owner);
    projectId = p.projectId;
    const post = async (url: string, payload: object) => {
      const r = await s.app.inject({ method: 'POST', url, headers: p.auth, payload });
      expect(r.statusCode, r.body).toBeLessThan(300);
    };
    // A staged rollout over two platforms: 1.9.0 (30 sessions, 20 iOS and 10 Android, no crash), 1.10.0 (4 iOS
    // sessions, 2 crash: significantly worse), 1.5.0 to 1.8.0 (2 each), and the newest 1.11.0 (1 Android session).
    const plan: [string, string, number, number][] = [
      ['1.9.0', 'ios', 20, 0],
      ['1.9.0', 'android', 10, 0],
      ['1.10.0', 'ios', 4, 2],
      ['1.5.0', 'ios', 2, 0],
      ['1.6.0', 'ios', 2, 0],
      ['1.7.0', 'ios', 2, 0],
      ['1.8.0', 'ios', 2, 0],
      ['1.11.0', 'android', 1, 0],
    ];
    let i = 0;
    for (const [v, platform, n, crashes] of plan) {
      for (let k = 0; k < n; k++, i++) {
        const start = sessionStart({
          startedAt: at + i * 1000,
          userId: `user-${i}`,
          device: { ...sessionStart().device, appVersion: v, platform },
        });
        await post('/ingest/session', start);
        if (k < crashes)
          await post(
            '/ingest/crash',
            crash(start.sessionId, { timestamp: at + i * 1000 + 500, message: 'TypeError: cart is empty' }),
          );
        // one session of the good release reports a handled error: it stays crash-free
        if (i === 0) {
          handledId = start.sessionId;
          await post(
            '/ingest/crash',
            crash(start.sessionId, {
              timestamp: at + 500,
              isFatal: false,
              handled: true,
              message: 'Handled: retrying fetch',
              stackTrace: 'at retry (net.js:1:1)\nat fetchAll (net.js:2:2)',
            }),
          );
        }
      }
    }
    // another project with 53 releases, one session each in the same hour (so listed by version): two pages of 50
    const many = await dashboardProject(s, owner, 'Many releases');
    manyId = many.projectId;
    for (let i = 0; i < 53; i++) {
      const start = sessionStart({
        startedAt: at,
        userId: `many-${i}`,
        device: { ...sessionStart().device, appVersion: `3.${String(i).padStart(2, '0')}` },
      });
      const r = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: many.auth, payload: start });
      expect(r.statusCode, r.body).toBeLessThan(300);
    }
    const groups = await s.app.inject({
      method: 'GET',
      url: `/api/dashboard/projects/${projectId}/crash-groups`,
      headers: owner.headers,
    });
    groupId = groups.json().data.find((g: { message: string }) => g.message.includes('cart is empty')).id;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  for (const [label, width, height] of [
    ['desktop', 1280, 800],
    ['phone', 390, 844],
  ] as const) {
    it(`reads the Releases page at ${width} px: versions, platforms, intervals, sort, trend picker, compare`, async () => {
      const ctx = await context(width, height);
      const p = await open(ctx, `#/p/${projectId}/releases`);
      await p.locator('table.releases tbody tr').first().waitFor();
      const versions = p.locator('table.releases tbody tr.version-row');
      // one row per version, newest (semver) first, the 1.9.0 row with a row per platform under it
      expect(await versions.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-release')))).toEqual([
        '1.11.0',
        '1.10.0',
        '1.9.0',
        '1.8.0',
        '1.7.0',
        '1.6.0',
        '1.5.0',
      ]);
      expect(
        await p
          .locator('tr.platform-row[data-release^="1.9.0|"]')
          .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-release'))),
      ).toEqual(['1.9.0|ios', '1.9.0|android']);
      const bad = p.locator('tr[data-release="1.10.0"]');
      expect(await bad.locator('td[data-label="Sessions"]').innerText()).toBe('4');
      const cf = await bad.locator('td[data-label="Crash-free sessions"]').innerText();
      expect(cf).toMatch(/^50%\s+15–85%/);
      expect(cf).toContain('worse than 1.9.0');
      // the small rollout is not marked, whatever its figure
      expect(
        await p.locator('tr[data-release="1.11.0"] td[data-label="Crash-free sessions"]').innerText(),
      ).not.toContain('worse');
      const good = p.locator('tr[data-release="1.9.0"]');
      expect(await good.locator('td[data-label="Sessions"]').innerText()).toBe('30');
      expect(await good.locator('td[data-label="Adoption 24 h"]').innerText()).toBe('69.77%'); // 30 of 43: two decimals
      // no figure with more than two decimals; "last seen" is never in the future
      expect(await p.locator('main').innerText()).not.toMatch(/\d\.\d{3,}\s*%/);
      const seen = await p
        .locator('table.releases td[data-label="Last seen (UTC)"] time')
        .evaluateAll((ts) => ts.map((t) => Date.parse(t.getAttribute('datetime')!)));
      expect(Math.max(...seen)).toBeLessThanOrEqual(Date.now());
      // the charts: the newest release always, the hidden ones said and reachable in the picker
      expect(await p.locator('.release-charts svg.chart').count()).toBe(2);
      const legend = p.locator('.release-charts figure').first().locator('.legend');
      expect(await legend.allInnerTexts()).toEqual(['1.11.0', '1.9.0', '1.10.0', '1.8.0', '1.7.0']);
      expect(await p.locator('#chart-hidden').innerText()).toMatch(/^2 releases are not in the charts/);
      await p.locator('details.chart-picker summary').click();
      await p.locator('details.chart-picker input[value="1.5.0"]').check();
      await p.waitForFunction(() => location.hash.includes('chart='));
      await p.locator('.release-charts figure .legend', { hasText: '1.5.0' }).first().waitFor();
      await settled(p);
      expect(await p.locator('#chart-hidden').innerText()).toMatch(/^1 release is not in the charts/);
      // the compare view: A = the previous release, B = the newest
      await p.locator('#release-compare table.compare').waitFor();
      expect(await p.locator('#release-compare tr[data-figure="crashFreeSessions"]').innerText()).toMatch(
        /50%\s+100%\s+\+50 pts/,
      );
      await p.getByLabel('Release A').selectOption('1.9.0');
      await p.waitForFunction(() =>
        /100%\s*100%\s*0 pts/.test(
          document.querySelector('#release-compare tr[data-figure="crashFreeSessions"]')?.textContent ?? '',
        ),
      );
      await settled(p);
      // sort by sessions: a header on a wide screen, the Sort menu on a phone
      if (width > 600) await p.locator('table.releases th a.sort', { hasText: /^Sessions/ }).click();
      else await p.getByLabel('Sort').selectOption('sessions desc');
      await p.waitForFunction(
        () => document.querySelector('table.releases tbody tr.version-row')?.getAttribute('data-release') === '1.9.0',
      );
      await settled(p);
      expect(await overflowX(p), `${label}: sideways scroll`).toBeLessThanOrEqual(0);
      // every axis label is drawn whole inside its chart (a clipped "82.5%" read as "2.5%")
      const clipped = await p
        .locator('svg.chart')
        .evaluateAll((svgs) =>
          svgs.flatMap((svg) =>
            [...svg.querySelectorAll('text.axis')]
              .filter((t) => (t as SVGTextElement).getBBox().x < 0)
              .map((t) => t.textContent),
          ),
        );
      expect(clipped).toEqual([]);
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
      expect(await rows.first().getAttribute('data-release')).toBe('3.52');
      expect(await p.locator('main p.hint').first().innerText()).toMatch(/^53 releases/);
      const pages = p.getByRole('navigation', { name: 'Release pages' });
      expect(await pages.innerText()).toContain('of 2');
      await pages.getByRole('link', { name: 'Next →' }).click();
      await p.waitForFunction(() => location.hash.includes('page=2'));
      // the table is drawn anew after the address changes: wait for the new page's rows
      await p.locator('table.releases tbody tr[data-release="3.02"]').waitFor();
      await settled(p);
      expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-release')))).toEqual([
        '3.02',
        '3.01',
        '3.00',
      ]);
      // the compare view picks among every release of the range
      expect(await p.getByLabel('Release A').locator('option').count()).toBe(53);
      await p.locator('#release-compare table.compare').waitFor();
      await settled(p);
      expect(await overflowX(p), `${label}: sideways scroll`).toBeLessThanOrEqual(0);
      await noBadText(p, `${label} releases page 2`);
      // each release here has one session a day: no chart repeats a value on its axis ("0 / 1 / 1")
      const axes = await p
        .locator('.release-charts svg')
        .evaluateAll((svgs) =>
          svgs.map((svg) => [...svg.querySelectorAll('text.axis[text-anchor="end"]')].map((t) => t.textContent)),
        );
      expect(axes.length).toBeGreaterThan(0);
      for (const values of axes) expect(new Set(values).size, `axis ${values.join(' / ')}`).toBe(values.length);
      await p.screenshot({ path: path.join(SHOTS, `releases-page-2-${label}.png`), fullPage: width > 600 });
      await pages.getByRole('link', { name: '← Previous' }).click();
      await p.waitForFunction(() => location.hash.includes('page=1'));
      await p.locator('table.releases tbody tr[data-release="3.52"]').waitFor();
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
      expect(await p.locator('#group-releases').innerText()).toMatch(
        /First release seen: 1\.10\.0 · last release seen: 1\.10\.0/,
      );
      await p.getByRole('button', { name: 'Last 24 hours' }).click();
      await p.waitForFunction(() => document.querySelectorAll('#group-activity-chart svg > g').length === 24);
      expect(await p.locator('#group-activity-chart').getAttribute('data-total')).toBe('2');
      if (label === 'desktop') {
        await p.locator('button[data-to="acknowledged"]').click();
        await p.locator('ol.history li[data-kind="status"]').first().waitFor();
        expect(await p.locator('ol.history li').first().innerText()).toContain(`${owner.email}: open → acknowledged`);
        await p.getByLabel('Assigned to').selectOption({ label: owner.email });
        await p.locator('ol.history li[data-kind="assignee"]').waitFor();
        await p.getByLabel('Add a comment').fill('Bad in 1.10.0, looking at it.');
        await p.getByRole('button', { name: 'Comment' }).click();
        await p.locator('ol.comments li', { hasText: 'Bad in 1.10.0, looking at it.' }).waitFor();
      } else {
        await p.locator('ol.comments li').first().waitFor();
        expect(await p.getByLabel('Assigned to').locator('option:checked').innerText()).toBe(owner.email);
      }
      await settled(p);
      const wide = await p.evaluate(() =>
        [...document.querySelectorAll('main *')]
          .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
          .map((e) => `${e.tagName}.${e.className}#${e.id}`)
          .slice(0, 5),
      );
      expect(await overflowX(p), `${label}: sideways scroll (${wide.join(', ')})`).toBeLessThanOrEqual(0);
      await noBadText(p, `${label} crash group`);
      await p.screenshot({ path: path.join(SHOTS, `crash-group-activity-${label}.png`), fullPage: width > 600 });
      await ctx.close();
    });
  }

  for (const [label, width, height] of [
    ['desktop', 1280, 800],
    ['phone', 390, 844],
  ] as const) {
    it(`at ${width} px: a handled error is no crash mark, no focus frame on a page opened directly, a styled verification page`, async () => {
      const ctx = await context(width, height);
      const p = await open(ctx, `#/p/${projectId}/sessions`);
      const row = p.locator(`tr[data-session="${handledId}"]`);
      await row.waitFor();
      expect(await row.locator('td[data-label="Status"]').innerText()).toContain('handled error');
      expect(await row.locator('.badge-bad').count()).toBe(0);
      // focus went to the page (for screen readers) without drawing a frame around <main>
      const frames = await p.evaluate(() =>
        [...document.querySelectorAll('main, main h1')].map((e) => getComputedStyle(e).outlineStyle),
      );
      expect(
        frames.every((x) => x === 'none'),
        frames.join(),
      ).toBe(true);

      const unverified = await signup(s, undefined, undefined, { verified: false });
      const token = await verificationToken(s, unverified.email);
      const page = await ctx.newPage();
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`${base}/api/auth/verify?token=${encodeURIComponent(token)}`);
      await page.getByRole('button', { name: 'Verify my address' }).click();
      await page.getByRole('heading', { name: 'Address verified' }).waitFor();
      const back = page.getByRole('link', { name: 'Back to flightrec' });
      expect(await back.getAttribute('href')).toBe('/');
      expect(await page.locator('main').evaluate((m) => getComputedStyle(m).borderTopStyle)).toBe('solid'); // styled, not bare text
      expect(await overflowX(page), `${label}: sideways scroll`).toBeLessThanOrEqual(0);
      await page.screenshot({ path: path.join(SHOTS, `verified-${label}.png`) });
      await back.click();
      await page.waitForURL(`${base}/**`);
      await ctx.close();
    });
  }

  it('raised no script error', () => {
    expect(errors).toEqual([]);
  });
});
