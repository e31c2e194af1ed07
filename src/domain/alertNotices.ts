import { isoMs } from '../lib/time.ts';
import { crashGroupLink, releasesLink, type RenderedEmail } from './crashAlert.ts';

/**
 * Alerts after the first occurrence (a regression, a rule firing): one line each, so that
 * several waiting for the project's throttle window go out as one digest.
 */
export interface Notice {
  /** Stable per notice: a resend carries the same Message-ID. */
  key: string;
  title: string;
  lines: string[];
  link: string | null;
}

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

const oneLine = (s: string, n: number) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

export function regressionNotice(
  publicUrl: string,
  g: {
    projectId: string;
    groupId: string;
    message: string;
    appVersion: string;
    summary?: string | null;
    stackHead?: string | null;
  },
): Notice {
  return {
    key: `crash-regressed-${g.groupId}-${g.appVersion.replace(/[^A-Za-z0-9._-]/g, '_')}`,
    title: `Regression: "${oneLine(g.message, 120) || '(no message)'}" is back in ${g.appVersion}`,
    lines: [
      `A resolved crash group was reopened by an occurrence from app version ${g.appVersion}.`,
      `Message: ${g.message}`,
      ...(g.summary ? [`Summary: ${g.summary}`] : []),
      ...(g.stackHead ? [`Stack trace (head):\n${g.stackHead}`] : []),
    ],
    link: crashGroupLink(publicUrl, g.projectId, g.groupId),
  };
}

export function ruleNotice(
  publicUrl: string,
  f: { firingId: string; projectId: string; groupId: string | null; text: string; firedAt: number },
): Notice {
  return {
    key: `rule-fired-${f.firingId}`,
    title: f.text,
    lines: [`Rule fired at ${isoMs(f.firedAt)}.`],
    link: f.groupId ? crashGroupLink(publicUrl, f.projectId, f.groupId) : releasesLink(publicUrl, f.projectId),
  };
}

/** One notice as its own email, or several as one digest (the project's throttle window). */
export function renderNotices(projectName: string, notices: Notice[], digestId: string): RenderedEmail {
  const first = notices[0];
  if (!first) throw new Error('renderNotices needs at least one notice');
  const project = oneLine(projectName, 60);
  if (notices.length === 1) {
    const text = [
      ...first.lines,
      '',
      ...(first.link ? [`Open: ${first.link}`] : []),
      '',
      `Project: ${projectName}`,
    ].join('\n');
    const html = [
      '<!doctype html><html><body style="font-family:sans-serif">',
      `<h2>${esc(first.title)}</h2>`,
      ...first.lines.map((l) => (l.includes('\n') ? `<pre>${esc(l)}</pre>` : `<p>${esc(l)}</p>`)),
      ...(first.link ? [`<p><a href="${esc(first.link)}">Open in flightrec</a></p>`] : []),
      `<p style="color:#777">Project: ${esc(projectName)}</p>`,
      '</body></html>',
    ].join('\n');
    return {
      subject: `[flightrec] ${project}: ${oneLine(first.title, 160)}`,
      text,
      html,
      messageId: `<${first.key}@flightrec>`,
    };
  }
  const text = [
    `${notices.length} alerts in ${projectName}:`,
    '',
    ...notices.map((n) => `- ${n.title}${n.link ? `\n  ${n.link}` : ''}`),
    '',
    'Alerts of a project are sent at most once per throttle window; those that come meanwhile are gathered in one email.',
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2>${notices.length} alerts in ${esc(projectName)}</h2><ul>`,
    ...notices.map((n) => `<li>${n.link ? `<a href="${esc(n.link)}">${esc(n.title)}</a>` : esc(n.title)}</li>`),
    '</ul></body></html>',
  ].join('\n');
  return {
    subject: `[flightrec] ${notices.length} alerts in ${project}`,
    text,
    html,
    messageId: `<alert-digest-${digestId}@flightrec>`,
  };
}
