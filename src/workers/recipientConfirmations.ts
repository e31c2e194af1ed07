import type { Config } from '../config.ts';
import type { PostgresRepos } from '../repos/index.ts';
import { ownerOfTeam } from '../repos/accounts.ts';
import { renderRecipientConfirmation } from '../domain/crashAlert.ts';
import { hashToken, randomToken } from '../domain/ids.ts';
import type { Mailer, MailGate } from './mailer.ts';
import type { WorkerLog } from './log.ts';

/** How long an alert-list confirmation link works. */
export const CONFIRM_LINK_TTL_MS = 3 * 24 * 3600 * 1000;

/** The page an address's owner opens to confirm it (a GET shows a button; only its POST confirms). */
export const confirmLink = (publicUrl: string, token: string) =>
  `${publicUrl}/api/alert-recipients/confirm?token=${encodeURIComponent(token)}`;

/**
 * Sends the confirmation email of each newly listed address (a sweep of every worker round).
 * The token's hash is stored before sending and the address marked mailed after: a crash in
 * between sends a second email whose link replaces the first. The email counts against the
 * address's and the project's team owner's daily caps; past them it is not sent (and the
 * address is marked mailed, so the sweep does not retry it every round).
 */
export function recipientConfirmations(
  config: Pick<Config, 'alertEmailFrom' | 'publicUrl'>,
  repos: Pick<PostgresRepos, 'pg' | 'recipients' | 'projects'>,
  mailer: Mailer,
  gate: MailGate,
  log: WorkerLog,
) {
  const { pg: db, recipients, projects } = repos;
  return async () => {
    for (const r of await recipients.unmailed(20)) {
      const project = await projects.getProject(r.projectId);
      const owner = project?.teamId ? await ownerOfTeam(db, project.teamId) : null;
      if (!(await gate('recipient-confirmation', r.email, owner))) {
        await recipients.markMailed(r.projectId, r.email);
        log.warn({ project: r.projectId }, 'alert recipient confirmation not sent: daily mail cap reached');
        continue;
      }
      const token = randomToken();
      await recipients.setToken(r.projectId, r.email, hashToken(token), CONFIRM_LINK_TTL_MS);
      const mail = renderRecipientConfirmation(project?.name ?? '', r.email, confirmLink(config.publicUrl, token));
      await mailer.send({
        from: config.alertEmailFrom,
        to: [r.email],
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: mail.messageId,
      });
      await recipients.markMailed(r.projectId, r.email);
      log.info({ project: r.projectId }, 'alert recipient confirmation sent');
    }
  };
}
