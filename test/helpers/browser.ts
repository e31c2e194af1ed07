import fs from 'node:fs';
import { expect } from 'vitest';
import path from 'node:path';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';

/**
 * Chromium for the browser tests: Debian's package (.ci/run installs it), driven by
 * playwright-core, so no browser is downloaded. Where it is missing the browser tests skip.
 */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = fs.existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(
    `browser tests skipped: ${CHROMIUM} is missing (install Debian's chromium: apt-get install -y chromium)`,
  );

/** Where the tests leave screenshots of the pages they check, for a person to look at. */
export const SHOTS = path.resolve('test-artifacts/screenshots');

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A browser context of this size; below 600 px it is a phone (touch, mobile viewport). */
export function sizedContext(
  browser: Browser,
  width: number,
  height: number,
  more: BrowserContextOptions = {},
): Promise<BrowserContext> {
  return browser.newContext({
    viewport: { width, height },
    ...(width < 600 ? { isMobile: true, hasTouch: true } : {}),
    ...more,
  });
}

/** Signs the context in with a dashboard session cookie (`name=value`) for the service at `base`. */
export async function withSession(ctx: BrowserContext, cookie: string, base: string): Promise<BrowserContext> {
  const eq = cookie.indexOf('=');
  await ctx.addCookies([{ name: cookie.slice(0, eq), value: cookie.slice(eq + 1), url: base }]);
  return ctx;
}

/** How far the page is wider than the screen (0: no sideways scroll). */
export const overflowX = (p: Page) =>
  p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** Waits until the page's main area has no list or view still loading. */
export const settled = (p: Page) => p.waitForFunction(() => !document.querySelector('main .loading, main [aria-busy]'));

/**
 * Collects the page's script errors into `errors`. A failed fetch (a 401 before log-in, a route
 * aborted on purpose) is logged by Chromium itself as a console error; only script errors count.
 */
export function collectErrors(p: Page, errors: string[]): Page {
  p.on('pageerror', (e) => errors.push(String(e)));
  p.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
  });
  return p;
}

/** The words a page must never print: a missing value shown as text. */
export async function expectNoBadText(p: Page, where: string): Promise<void> {
  expect(await p.evaluate(() => document.body.innerText), where).not.toMatch(/\b(null|undefined|NaN)\b|\[object /);
}
