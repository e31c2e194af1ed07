import type { Config } from '../config.ts';
import type { AccountsRepo } from '../repos/accounts.ts';
import { renderInvitation, renderVerification } from '../domain/accountMail.ts';
import { hashToken, randomToken } from '../domain/ids.ts';
import type { Mailer, MailGate } from './mailer.ts';
import type { WorkerLog } from './log.ts';

/** How long an email-verification link works. */
export const VERIFY_LINK_TTL_MS = 24 * 3600 * 1000;

/** The page that verifies an address (a GET shows a button; only its POST verifies). */
export const verifyLink = (publicUrl: string, token: string) =>
  `${publicUrl}/api/auth/verify?token=${encodeURIComponent(token)}`;

/** Where an invitee answers: the dashboard's Team page. */
export const invitationLink = (publicUrl: string) => `${publicUrl}/#/team`;

type MailConfig = Pick<Config, 'alertEmailFrom' | 'publicUrl'>;

/**
 * The emails about accounts are two sweeps of every worker round: verification links that were
 * asked for (sign-up, "resend"), and the invitations of team owners. Each email is claimed
 * before it is sent, so two workers never both send it; each counts against the daily caps
 * (a verification against the account itself, an invitation against the owner who sent it).
 */
export function verificationMails(
  config: MailConfig,
  accounts: AccountsRepo,
  mailer: Mailer,
  gate: MailGate,
  log: WorkerLog,
) {
  return async () => {
    for (const u of await accounts.verificationsToMail(20)) {
      const token = randomToken();
      if (!(await accounts.claimVerificationMail(u.userId, hashToken(token), VERIFY_LINK_TTL_MS))) continue;
      if (!(await gate('verification', u.email, u.userId))) {
        log.warn({ user: u.userId }, 'verification email not sent: daily mail cap reached');
        continue;
      }
      const mail = renderVerification(u.email, verifyLink(config.publicUrl, token), VERIFY_LINK_TTL_MS / 3_600_000);
      await mailer.send({
        from: config.alertEmailFrom,
        to: [u.email],
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: mail.messageId,
      });
      log.info({ user: u.userId }, 'verification email sent');
    }
  };
}

export function invitationMails(
  config: MailConfig,
  accounts: AccountsRepo,
  mailer: Mailer,
  gate: MailGate,
  log: WorkerLog,
) {
  return async () => {
    for (const i of await accounts.invitationsToMail(20)) {
      if (!(await accounts.claimInvitationMail(i.id))) continue;
      if (!(await gate('invitation', i.email, i.invitedBy))) {
        log.warn({ invitation: i.id }, 'invitation email not sent: daily mail cap reached');
        continue;
      }
      const mail = renderInvitation({ ...i, invitationId: i.id }, invitationLink(config.publicUrl));
      await mailer.send({
        from: config.alertEmailFrom,
        to: [i.email],
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: mail.messageId,
      });
      log.info({ invitation: i.id }, 'invitation email sent');
    }
  };
}
