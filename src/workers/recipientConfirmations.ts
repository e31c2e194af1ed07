import type { Config } from '../config.ts';
import type { Postgres } from '../stores/postgres/port.ts';
import { alertRecipientsRepo } from '../repos/alertRecipients.ts';
import { projectsRepo } from '../repos/projects.ts';
import { renderRecipientConfirmation } from '../domain/crashAlert.ts';
import { hashToken, randomToken } from '../domain/ids.ts';
import type { Mailer } from './mailer.ts';
import type { WorkerLog } from './log.ts';

/** The link an address's owner opens to confirm it. */
export const confirmLink = (publicUrl: string, token: string) => `${publicUrl}/api/alert-recipients/confirm?token=${encodeURIComponent(token)}`;

/**
 * Sends the confirmation email of each newly listed address (a sweep of every worker round).
 * The token's hash is stored before sending and the address marked mailed after: a crash in
 * between sends a second email whose link replaces the first.
 */
export function recipientConfirmations(config: Pick<Config, 'alertEmailFrom' | 'publicUrl'>, db: Postgres, mailer: Mailer, log: WorkerLog) {
  const recipients = alertRecipientsRepo(db);
  const projects = projectsRepo(db);
  return async () => {
    for (const r of await recipients.unmailed(20)) {
      const token = randomToken();
      await recipients.setToken(r.projectId, r.email, hashToken(token));
      const project = await projects.getProject(r.projectId);
      const mail = renderRecipientConfirmation(project?.name ?? '', r.email, confirmLink(config.publicUrl, token));
      await mailer.send({ from: config.alertEmailFrom, to: [r.email], subject: mail.subject, text: mail.text, html: mail.html, messageId: mail.messageId });
      await recipients.markMailed(r.projectId, r.email);
      log.info({ project: r.projectId }, 'alert recipient confirmation sent');
    }
  };
}
