import { createHash } from 'node:crypto';
import { isoMs } from '../lib/time.ts';
import { kindOf, type CrashContext } from './crashSummary.ts';

/** Everything a crash-alert email shows: the crash's context and where and when it was seen. */
export interface CrashAlert extends CrashContext {
  projectId: string;
  projectName: string;
  groupId: string;
  summary: string;
  summarySource: string;
  firstSeenAt: number;
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
  messageId: string;
}

/** The same id on every send of a group's alert, so a receiving system can drop a repeat. */
export function alertMessageId(groupId: string): string {
  return `<crash-group-${groupId}@flightrec>`;
}

/** The crash group's page in the dashboard the service serves at `/`. */
export function crashGroupLink(publicUrl: string, projectId: string, groupId: string): string {
  return `${publicUrl.replace(/\/$/, '')}/#/p/${encodeURIComponent(projectId)}/crashes/${encodeURIComponent(groupId)}`;
}

/** The Releases page of a project, where a release's crash-free figures are read. */
export function releasesLink(publicUrl: string, projectId: string): string {
  return `${publicUrl.replace(/\/$/, '')}/#/p/${encodeURIComponent(projectId)}/releases`;
}

export const oneLine = (s: string, n: number) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

export const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

export function renderCrashAlert(a: CrashAlert, publicUrl: string): RenderedEmail {
  const link = crashGroupLink(publicUrl, a.projectId, a.groupId);
  const device = [a.deviceBrand, a.deviceModel].filter(Boolean).join(' ') || 'unknown';
  const platform = [a.platform, a.osVersion].filter(Boolean).join(' ') || 'unknown';
  const app = a.appVersion ? `${a.appVersion}${a.appBuildNumber ? ` (${a.appBuildNumber})` : ''}` : 'unknown';
  const summaryLabel =
    a.summarySource === 'deterministic' ? 'Summary (from the stack trace)' : `Summary (${a.summarySource})`;
  const facts: [string, string][] = [
    ['Project', a.projectName],
    ['Kind', kindOf(a)],
    ['First seen', isoMs(a.firstSeenAt)],
    ['App version', app],
    ['Platform', platform],
    ['Device', device],
  ];
  const subject = `[flightrec] New crash in ${oneLine(a.projectName, 60)}: ${oneLine(a.message, 120) || '(no message)'}`;
  const text = [
    `A new crash group appeared in ${a.projectName}.`,
    '',
    `Message: ${a.message}`,
    '',
    `${summaryLabel}:`,
    a.summary,
    '',
    ...facts.map(([k, v]) => `${k}: ${v}`),
    '',
    'Stack trace (head):',
    a.stackHead,
    '',
    `Crash group: ${link}`,
    '',
    'You get this email once per crash group, on its first occurrence.',
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2>New crash in ${esc(a.projectName)}</h2>`,
    `<p><strong>${esc(a.message)}</strong></p>`,
    `<h3>${esc(summaryLabel)}</h3><p>${esc(a.summary)}</p>`,
    '<table>',
    ...facts.map(([k, v]) => `<tr><th align="left">${esc(k)}</th><td>${esc(v)}</td></tr>`),
    '</table>',
    `<h3>Stack trace (head)</h3><pre>${esc(a.stackHead)}</pre>`,
    `<p><a href="${esc(link)}">Open the crash group</a></p>`,
    '<p style="color:#777">You get this email once per crash group, on its first occurrence.</p>',
    '</body></html>',
  ].join('\n');
  return { subject, text, html, messageId: alertMessageId(a.groupId) };
}

/** Where a project's alerts may go, from the facts the alert job reads. */
export interface RecipientFacts {
  /** The project's own list; null when it has none (an empty list mutes the project). */
  projectList: string[] | null;
  /** Addresses of the list whose owners confirmed them (or the operator set). */
  confirmed: string[];
  /** The project's team members' own addresses; null for a project of no team (admin API). */
  teamMembers: string[] | null;
  /** ALERT_EMAIL_TO. */
  defaults: string[];
}

/**
 * The project's list when set, keeping only addresses that are confirmed or a team member's
 * own, so a list cannot be used to mail strangers; else the team's members; else ALERT_EMAIL_TO.
 */
export function alertRecipients(f: RecipientFacts): string[] {
  if (f.projectList !== null) {
    const ok = new Set([...f.confirmed, ...(f.teamMembers ?? [])]);
    return f.projectList.filter((e) => ok.has(e));
  }
  if (f.teamMembers !== null && f.teamMembers.length > 0) return f.teamMembers;
  return f.defaults;
}

/** At most this many groups are listed in one digest; the rest are counted. */
export const DIGEST_MAX_GROUPS = 50;

export interface DigestGroup {
  groupId: string;
  message: string;
  firstSeenAt: number;
}

/** One email for several new crash groups of a project (a burst within the throttle window). */
export function renderCrashDigest(
  p: { projectId: string; projectName: string; digestId: string },
  groups: DigestGroup[],
  total: number,
  publicUrl: string,
): RenderedEmail {
  const shown = groups.slice(0, DIGEST_MAX_GROUPS);
  const more = total - shown.length;
  const subject = `[flightrec] ${total} new crash groups in ${oneLine(p.projectName, 60)}`;
  const lines = shown.map(
    (g) =>
      `- ${oneLine(g.message, 160) || '(no message)'} (first seen ${isoMs(g.firstSeenAt)})\n  ${crashGroupLink(publicUrl, p.projectId, g.groupId)}`,
  );
  const text = [
    `${total} new crash groups appeared in ${p.projectName}.`,
    '',
    ...lines,
    ...(more > 0 ? ['', `… and ${more} more.`] : []),
    '',
    'Alerts of a project are sent at most once per throttle window; groups that appear meanwhile come in one digest.',
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2>${total} new crash groups in ${esc(p.projectName)}</h2>`,
    '<ul>',
    ...shown.map(
      (g) =>
        `<li><a href="${esc(crashGroupLink(publicUrl, p.projectId, g.groupId))}">${esc(oneLine(g.message, 160) || '(no message)')}</a> <small>${esc(isoMs(g.firstSeenAt))}</small></li>`,
    ),
    '</ul>',
    ...(more > 0 ? [`<p>… and ${more} more.</p>`] : []),
    '</body></html>',
  ].join('\n');
  return { subject, text, html, messageId: `<crash-digest-${p.digestId}@flightrec>` };
}

/**
 * The email that asks an address's owner to confirm it before any alert reaches it. The
 * project's name (chosen by whoever listed the address) stays out of the subject.
 */
export function renderRecipientConfirmation(projectName: string, email: string, link: string): RenderedEmail {
  const subject = '[flightrec] Confirm that you want crash alerts';
  const text = [
    `Someone listed ${email} as a recipient of the crash alerts of a flightrec project named "${oneLine(projectName, 200)}".`,
    '',
    'To receive them, open this link:',
    link,
    '',
    'If you did not expect this, ignore this email: nothing is sent to you unless you confirm.',
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<p>Someone listed ${esc(email)} as a recipient of the crash alerts of a flightrec project named “${esc(oneLine(projectName, 200))}”.</p>`,
    `<p><a href="${esc(link)}">Confirm that you want these alerts</a></p>`,
    '<p>If you did not expect this, ignore this email: nothing is sent to you unless you confirm.</p>',
    '</body></html>',
  ].join('\n');
  return {
    subject,
    text,
    html,
    messageId: `<confirm-${createHash('sha256').update(link).digest('hex').slice(0, 24)}@flightrec>`,
  };
}

/**
 * An alert (or digest) with its recipient's unsubscribe link at the foot: each recipient gets
 * their own copy, so the link names them and no recipient sees the others.
 */
export function withUnsubscribe(mail: RenderedEmail, link: string): RenderedEmail {
  const text = `${mail.text}\n\nStop these alerts for this project: ${link}`;
  const foot = `<p style="color:#777"><a href="${esc(link)}">Unsubscribe</a> from this project's crash alerts.</p>\n</body></html>`;
  const html = mail.html.endsWith('</body></html>')
    ? `${mail.html.slice(0, -'</body></html>'.length)}${foot}`
    : `${mail.html}\n${foot}`;
  return { ...mail, text, html };
}
