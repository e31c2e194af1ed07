import { createHash } from 'node:crypto';
import { esc, oneLine, type RenderedEmail } from './crashAlert.ts';

// The emails about an account (not about crashes): verifying its address and team invitations.

const idOf = (kind: string, seed: string) =>
  `<${kind}-${createHash('sha256').update(seed).digest('hex').slice(0, 24)}@flightrec>`;

const page = (...paragraphs: string[]) =>
  ['<!doctype html><html><body style="font-family:sans-serif">', ...paragraphs, '</body></html>'].join('\n');

export function renderVerification(email: string, link: string, validHours: number): RenderedEmail {
  const subject = '[flightrec] Verify your email address';
  const text = [
    `Someone (hopefully you) created a flightrec account with ${email}.`,
    '',
    'To verify this address, open this link and press the button on the page:',
    link,
    '',
    `The link works for ${validHours} hours. Until the address is verified the account cannot join teams or receive crash alerts.`,
    'If you did not create this account, ignore this email.',
  ].join('\n');
  const html = page(
    `<p>Someone (hopefully you) created a flightrec account with ${esc(email)}.</p>`,
    `<p><a href="${esc(link)}">Verify this address</a> (the link works for ${validHours} hours).</p>`,
    '<p>Until the address is verified the account cannot join teams or receive crash alerts. If you did not create this account, ignore this email.</p>',
  );
  return { subject, text, html, messageId: idOf('verify', link) };
}

/** The team's name and the inviter's address come from users, so they are shown as quoted text only. */
export function renderInvitation(
  i: { email: string; teamName: string; inviterEmail: string; invitationId: string },
  link: string,
): RenderedEmail {
  const subject = '[flightrec] You are invited to a team';
  const text = [
    `${i.inviterEmail} invited ${i.email} to the flightrec team "${oneLine(i.teamName, 200)}".`,
    '',
    'To accept, sign in (or create an account) with this address, verify it, and press Accept on the Team page:',
    link,
    '',
    'If you do not know the sender, ignore this email: nobody joins a team without accepting.',
  ].join('\n');
  const html = page(
    `<p>${esc(i.inviterEmail)} invited ${esc(i.email)} to the flightrec team “${esc(oneLine(i.teamName, 200))}”.</p>`,
    `<p><a href="${esc(link)}">Open the Team page</a>, sign in (or create an account) with this address, verify it, and press Accept.</p>`,
    '<p>If you do not know the sender, ignore this email: nobody joins a team without accepting.</p>',
  );
  return { subject, text, html, messageId: idOf('invitation', i.invitationId) };
}
