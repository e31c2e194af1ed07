import { isoMs } from './time.ts';
import { kindOf } from './crashSummary.ts';

/** Everything a crash-alert email shows. */
export interface CrashAlert {
  projectId: string;
  projectName: string;
  groupId: string;
  message: string;
  summary: string;
  summarySource: string;
  stackHead: string;
  isFatal: boolean;
  handled: boolean;
  firstSeenAt: number;
  appVersion: string | null;
  appBuildNumber: string | null;
  platform: string | null;
  osVersion: string | null;
  deviceBrand: string | null;
  deviceModel: string | null;
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

const oneLine = (s: string, n: number) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

export function renderCrashAlert(a: CrashAlert, publicUrl: string): RenderedEmail {
  const link = crashGroupLink(publicUrl, a.projectId, a.groupId);
  const device = [a.deviceBrand, a.deviceModel].filter(Boolean).join(' ') || 'unknown';
  const platform = [a.platform, a.osVersion].filter(Boolean).join(' ') || 'unknown';
  const app = a.appVersion ? `${a.appVersion}${a.appBuildNumber ? ` (${a.appBuildNumber})` : ''}` : 'unknown';
  const summaryLabel = a.summarySource === 'deterministic' ? 'Summary (from the stack trace)' : `Summary (${a.summarySource})`;
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
