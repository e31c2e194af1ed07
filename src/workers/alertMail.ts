import type { Config } from '../config.ts';
import { withUnsubscribe, type RenderedEmail } from '../domain/crashAlert.ts';
import type { Mailer, MailGate } from './mailer.ts';

export interface AlertMailDeps {
  config: Pick<Config, 'alertEmailFrom'>;
  mailer: Mailer;
  /** The daily mail caps (per address, per account). */
  gate: MailGate;
  /** The signed unsubscribe link of an address for a project. */
  unsubscribeLink: (projectId: string, email: string) => Promise<string>;
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
      from: d.config.alertEmailFrom, to: [addr], subject: m.subject, text: m.text, html: m.html, messageId: m.messageId,
      headers: { ...alert.headers, 'List-Unsubscribe': `<${link}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    });
    sent++;
  }
  const plural = (n: number) => `${n} recipient${n === 1 ? '' : 's'}`;
  return `${plural(sent)} via ${d.mailer.kind}${capped ? `; ${plural(capped)} skipped (daily mail cap)` : ''}`;
}
