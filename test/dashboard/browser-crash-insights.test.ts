import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.ts';
import { type dashboardProject, type Account, listeningDashboard } from '../helpers/accounts.ts';
import { sessionStart, T0 } from '../helpers/payloads.ts';
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

// The crash page's suspects table and trail list in Chromium at 1280 and 390 px: the planted OS
// version ranks first, the failing request leads the trail and opens a session that followed it,
// hostile text stays text, and nothing scrolls sideways on a phone.

const HOSTILE = '<img src=x onerror="window.__pwned=true">';
const LONG = `/${'unbroken-screen-name-'.repeat(12)}`;

describe.skipIf(!hasChromium)('crash suspects and trail in Chromium', () => {
  let s: TestServer;
  let browser: Browser;
  let base: string;
  let account: Account;
  let projectId = '';
  let groupId = '';
  const errors: string[] = [];

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    let p: Awaited<ReturnType<typeof dashboardProject>>;
    ({ s, base, account, project: p } = await listeningDashboard('Shop'));
    projectId = p.projectId;
    const post = async (url: string, payload: object) => {
      const r = await s.app.inject({ method: 'POST', url, headers: p.auth, payload });
      expect(r.statusCode, r.body).toBe(201);
    };
    for (let i = 0; i < 40; i++) {
      const st = sessionStart({ startedAt: T0 + i * 60_000 });
      const planted = i < 8;
      st.device = {
        ...st.device,
        platform: 'android',
        osVersion: planted ? '14' : '13',
        brand: 'Google',
        model: HOSTILE,
        appVersion: '5.0.0',
      };
      await post('/ingest/session', st);
      if (!(planted || i === 39)) continue;
      const at = st.startedAt + 60_000;
      const sid = st.sessionId;
      await post('/ingest/events', {
        sessionId: sid,
        events: [
          { sessionId: sid, sequenceNumber: 0, timestamp: at - 9_000, type: 'navigate', from: null, to: LONG },
          { sessionId: sid, sequenceNumber: 1, timestamp: at - 6_000, type: 'tap', x: 1, y: 1, target: HOSTILE },
          {
            sessionId: sid,
            sequenceNumber: 2,
            timestamp: at - 1_000,
            type: 'network',
            method: 'POST',
            url: `https://api.shop.example/pay/${i + 100}`,
            statusCode: 502,
            duration: 9,
            error: null,
          },
        ],
      });
      await post('/ingest/crash', {
        sessionId: sid,
        timestamp: at,
        message: 'Error: pay failed',
        stackTrace: 'Error: pay failed\n    at pay (app.js:1:1)',
        isFatal: true,
        handled: false,
      });
    }
    await s.settled();
    const groups = await (await s.stores()).pg.query<{ id: string }>(
      'SELECT id FROM crash_groups WHERE project_id = $1',
      [projectId],
    );
    groupId = groups.rows[0]!.id;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  async function open(width: number, height: number): Promise<Page> {
    const page = await (await withSession(await sizedContext(browser, width, height), account.cookie, base)).newPage();
    return collectErrors(page, errors);
  }

  for (const [label, width, height] of [
    ['laptop', 1280, 800],
    ['phone', 390, 844],
  ] as const) {
    it(`${label} (${width} px): the suspects table and the trail list, as text, without sideways scroll`, async () => {
      const page = await open(width, height);
      await page.goto(`${base}/#/p/${projectId}/crashes/${groupId}`);
      await page.locator('table.suspects-table tbody tr').first().waitFor();
      await page.locator('li.trail').first().waitFor();
      await settled(page);
      const first = page.locator('table.suspects-table tbody tr').first();
      expect(await first.getAttribute('data-dimension')).toBe('osVersion');
      const firstText = (await first.innerText()).replace(/\s+/g, ' ');
      expect(firstText).toContain('android 14');
      expect(firstText).toContain('89%'); // 8 of 9 occurrences
      expect(firstText).toContain('20%'); // 8 of 40 sessions
      expect(firstText).toMatch(/≥ ×\d/);
      const trail = page.locator('li.trail').first();
      const steps = await trail.locator('ol.trail-steps li .step-label').allTextContents();
      // a label is cut at 200 characters before it is normalised
      expect(steps).toEqual([LONG.slice(0, 200), HOSTILE, 'POST api.shop.example/pay/<n> → 502']);
      expect(await trail.locator('.trail-count').innerText()).toContain('9 of 9');
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(await page.locator('#trail img').count()).toBe(0);
      expect(await overflowX(page)).toBe(0);
      await expectNoBadText(page, `${label} crash page`);
      await page.locator('#suspects').screenshot({ path: path.join(SHOTS, `${label}-crash-suspects.png`) });
      await page.locator('#trail').screenshot({ path: path.join(SHOTS, `${label}-crash-trail.png`) });
      // the link opens a session that followed the trail, at its crash
      await trail.getByRole('link').click();
      await page.waitForFunction(() => /#\/p\/[^/]+\/sessions\/[0-9a-f-]{36}\?crash=/.test(location.hash));
      await page.context().close();
    });
  }

  it('the trail window is chosen on the page', async () => {
    const page = await open(1280, 800);
    await page.goto(`${base}/#/p/${projectId}/crashes/${groupId}`);
    await page.locator('li.trail').first().waitFor();
    await page.locator('#trail-window').selectOption('10');
    await page.waitForFunction(() => document.querySelector('#trail p.hint')?.textContent?.includes('10 s'));
    await page.locator('li.trail').first().waitFor();
    expect(await page.locator('li.trail').first().locator('.step-label').allTextContents()).toHaveLength(3);
    await page.context().close();
  });

  it('no script errors', () => {
    expect(errors).toEqual([]);
  });
});
