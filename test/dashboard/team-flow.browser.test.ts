import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { PASSWORD, signup, verificationToken } from '../helpers/accounts.ts';
import { parseMail } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  CHROMIUM,
  collectErrors,
  hasChromium,
  launchChromium,
  overflowX,
  settled,
  sizedContext,
} from '../helpers/browser.ts';

// The Team page end to end (finding 7 of the third probe): the owner invites and sees it
// confirmed and pending (with Revoke), the invitee is emailed a link, verifies their address from
// the emailed link's page, and accepts with a button. At desktop (1366 px) and phone (390 px) width.

describe.skipIf(!hasChromium)(`the team invitation flow in Chromium (${CHROMIUM})`, () => {
  let s: TestServer;
  let browser: Browser;
  let base: string;
  const pageErrors: string[] = [];

  const mailsTo = (addr: string) => {
    const dir = path.join(s.dataDir, 'mail');
    if (!fs.existsSync(dir)) return [];
    return fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.eml'))
      .map((f) => parseMail(fs.readFileSync(path.join(dir, f), 'utf8')))
      .filter((m) => m.headers.to === addr);
  };
  async function open(width: number, height: number): Promise<Page> {
    return collectErrors(await (await sizedContext(browser, width, height)).newPage(), pageErrors);
  }
  async function logIn(p: Page, email: string) {
    await p.goto(`${base}/#/login`);
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByRole('button', { name: 'Log in' }).click();
    await p.locator('#top:not([hidden])').waitFor();
  }

  beforeAll(async () => {
    s = await startTestServer({ RUN_WORKER: 'true', OUTBOX_POLL_MS: '100', RATE_LIMIT_AUTH_PER_MIN: '1000' });
    base = await s.listen();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('invite → confirmed and pending (revocable) → emailed → the invitee verifies and accepts', async () => {
    const owner = await signup(s, `owner-${randomUUID()}@example.com`);
    const bob = `bob-${randomUUID()}@example.com`;
    const carol = `carol-${randomUUID()}@example.com`;

    // The owner, at desktop width.
    const desk = await open(1366, 768);
    await logIn(desk, owner.email);
    expect(await desk.locator('#notice .banner').count()).toBe(0); // verified: no banner
    await desk.goto(`${base}/#/team`);
    await desk.getByRole('heading', { name: 'Teams' }).waitFor();
    await settled(desk);
    for (const who of [bob, carol]) {
      await desk.getByLabel('Invite a member (they join once they accept)').fill(who);
      await desk.getByRole('button', { name: 'Invite', exact: true }).click();
      await desk.getByText(`Invitation sent to ${who}.`).waitFor();
    }
    const pending = desk.getByRole('list', { name: /Pending invitations/ });
    await expect
      .poll(async () => pending.locator('li').allTextContents())
      .toEqual([expect.stringContaining(bob), expect.stringContaining(carol)]);
    await desk.getByRole('button', { name: `Revoke the invitation of ${carol}` }).click();
    await desk.getByText(`The invitation of ${carol} is revoked.`).waitFor();
    await expect.poll(async () => pending.locator('li').allTextContents()).toEqual([expect.stringContaining(bob)]);
    expect(await overflowX(desk)).toBeLessThanOrEqual(0);

    // bob's inbox: the invitation, with a link to the Team page.
    const invitation = await waitFor('the invitation email', () =>
      mailsTo(bob).find((m) => /invited/.test(m.headers.subject ?? '')),
    );
    expect(invitation.body).toContain('/#/team');
    expect(invitation.body).toContain(owner.email);
    expect(mailsTo(carol).filter((m) => /invited/.test(m.headers.subject ?? '')).length).toBeLessThanOrEqual(1); // revoked: sent once at most
    // The owner's pending list says the email went out.
    await desk.reload();
    await desk.getByText(/email sent/).waitFor();

    // bob signs up (without verifying yet) and opens the dashboard on a phone.
    await signup(s, bob, PASSWORD, { verified: false });
    const phone = await open(390, 844);
    await logIn(phone, bob);
    const banner = phone.locator('#notice .banner');
    await banner.waitFor();
    expect(await banner.textContent()).toContain('Verify your email address');
    await phone.goto(`${base}/#/team`);
    await settled(phone);
    await phone.getByText('Verify your email address to see and accept the invitations').waitFor();
    expect(await phone.getByRole('button', { name: /^Accept/ }).count()).toBe(0);
    expect(await overflowX(phone)).toBeLessThanOrEqual(0);

    // The emailed link: its page only shows a button; pressing it verifies.
    const token = await verificationToken(s, bob);
    await phone.goto(`${base}/api/auth/verify?token=${encodeURIComponent(token)}`);
    await phone.getByRole('button', { name: 'Verify my address' }).click();
    await phone.getByText(`${bob} is verified`).waitFor();

    await phone.goto(`${base}/#/team`);
    await settled(phone);
    await phone.getByRole('heading', { name: 'Invitations for you' }).waitFor();
    expect(await phone.locator('#notice .banner').count()).toBe(0);
    expect(await overflowX(phone)).toBeLessThanOrEqual(0);
    await phone.getByRole('button', { name: /^Accept the invitation/ }).click();
    await phone.locator(`article[data-team="${owner.teamId}"]`).waitFor();
    expect(await phone.locator(`article[data-team="${owner.teamId}"] ul.members`).textContent()).toContain(bob);
    expect(await phone.getByRole('heading', { name: 'Invitations for you' }).count()).toBe(0);
    expect(await overflowX(phone)).toBeLessThanOrEqual(0);

    // The owner sees bob as a member, nothing pending.
    await desk.reload();
    await settled(desk);
    await desk.getByRole('button', { name: `Remove ${bob}` }).waitFor();
    await desk.getByText('No pending invitations.').waitFor();

    // Removing bob: the owner decides about the keys bob made (here: revoke them).
    await desk.getByRole('button', { name: `Remove ${bob}` }).click();
    await desk.getByRole('button', { name: `Remove ${bob} and revoke their keys` }).click();
    await desk.getByText(`${bob} is removed from the team; 0 API keys they made are revoked.`).waitFor();
    expect(await desk.locator(`article[data-team="${owner.teamId}"] ul.members`).textContent()).not.toContain(bob);
    expect(await overflowX(desk)).toBeLessThanOrEqual(0);
    expect(pageErrors).toEqual([]);
  });
});
