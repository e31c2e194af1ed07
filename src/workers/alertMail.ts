import type { Config } from '../config.ts';
import { alertRecipients, withUnsubscribe, type RenderedEmail } from '../domain/crashAlert.ts';
import type { PostgresRepos } from '../repos/index.ts';
import { memberEmailsOfTeam, ownerOfTeam } from '../repos/accounts.ts';
import { confirmedRecipients, unsubscribedRecipients } from '../repos/alertRecipients.ts';
import type { Mailer, MailGate } from './mailer.ts';

export interface AlertMailDeps {
  config: Pick<Config, 'alertEmailFrom'>;
  mailer: Mailer;
  /** The daily mail caps (per address, per account). */
  gate: MailGate;
  /** The signed unsubscribe link of an address for a project. */
  unsubscribeLink: (projectId: string, email: string) => Promise<string>;
}

/** Who one of a project's alerts goes to, and the account its mail counts against. */
export interface AlertAudience {
  projectName: string;
  to: string[];
  /** The owner of the project's team (the daily caps' account); null for a project of no team. */
  ownerId: string | null;
}

/**
 * The recipients of a project's alert (domain/crashAlert.ts's rule over the stored lists), less
 * the addresses that unsubscribed from the project. `ownList` is a rule's own list, which
 * replaces the project's and `defaults` (ALERT_EMAIL_TO); null for the project's alerts. Null
 * when the project is gone.
 */
export async function alertAudience(
  repos: Pick<PostgresRepos, 'pg' | 'projects'>,
  projectId: string,
  opts: { ownList: string[] | null; defaults: string[] },
): Promise<AlertAudience | null> {
  const { pg: db, projects } = repos;
  const project = await projects.getProject(projectId);
  if (!project) return null;
  const teamId = await projects.teamOf(projectId);
  const unsubscribed = new Set(await unsubscribedRecipients(db, projectId));
  const to = alertRecipients({
    projectList: opts.ownList ?? project.alertEmails,
    confirmed: await confirmedRecipients(db, projectId),
    teamMembers: teamId === null ? null : await memberEmailsOfTeam(db, teamId),
    defaults: opts.ownList ? [] : opts.defaults,
  }).filter((e) => !unsubscribed.has(e));
  return { projectName: project.name, to, ownerId: teamId === null ? null : await ownerOfTeam(db, teamId) };
}

/**
 * Every alert email (a new group, a digest, a regression, a rule's firing) goes out the same
 * way: one copy per recipient, each with its own unsubscribe link, each within the daily caps
 * counted against the project's team owner. Returns how it went, for the job's note.
 */
export async function sendToEach(
  d: AlertMailDeps,
  alert: { projectId: string; ownerId: string | null; to: readonly string[]; headers: Record<string, string> },
  mail: RenderedEmail,
): Promise<string> {
  let sent = 0;
  let capped = 0;
  for (const addr of alert.to) {
    if (!(await d.gate('alert', addr, alert.ownerId))) {
      capped++;
      continue;
    }
    const link = await d.unsubscribeLink(alert.projectId, addr);
    const m = withUnsubscribe(mail, link);
    await d.mailer.send({
      from: d.config.alertEmailFrom,
      to: [addr],
      subject: m.subject,
      text: m.text,
      html: m.html,
      messageId: m.messageId,
      headers: {
        ...alert.headers,
        'List-Unsubscribe': `<${link}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      },
    });
    sent++;
  }
  const plural = (n: number) => `${n} recipient${n === 1 ? '' : 's'}`;
  return `${plural(sent)} via ${d.mailer.kind}${capped ? `; ${plural(capped)} skipped (daily mail cap)` : ''}`;
}
