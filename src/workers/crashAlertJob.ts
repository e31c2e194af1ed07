import type { Config } from '../config.ts';
import type { CrashesRepo } from '../repos/crashes.ts';
import type { OutboxRepo, OutboxJob } from '../repos/outbox.ts';
import { renderCrashAlert } from '../domain/crashAlert.ts';
import { PermanentJobError } from './outbox.ts';
import type { Summarize } from './summary.ts';
import type { Mailer } from './mailer.ts';

export interface CrashAlertDeps {
  config: Pick<Config, 'alertEmailFrom' | 'alertEmailTo' | 'publicUrl'>;
  crashes: CrashesRepo;
  outbox: OutboxRepo;
  summarize: Summarize;
  mailer: Mailer;
}

/** Project list when set (an empty list mutes the project), else ALERT_EMAIL_TO. */
export function alertRecipients(projectEmails: string[] | null, defaults: string[]): string[] {
  return projectEmails ?? defaults;
}

/**
 * The first-occurrence job of a crash group: summary, then email. Each step is skipped when
 * its result is already recorded, so a retry redoes only what did not finish. The one window
 * left — sent, but the worker died before recording it — resends once, with the same Message-ID.
 */
export function crashAlertJob(d: CrashAlertDeps) {
  return async (job: OutboxJob): Promise<{ note: string | null }> => {
    const src = await d.crashes.alertSource(job.groupId);
    if (!src) throw new PermanentJobError(`crash group ${job.groupId} not found`);

    let summary = src.summary;
    let source = src.summarySource ?? '';
    if (summary === null) {
      const made = await d.summarize(src);
      ({ summary, source } = await d.crashes.storeSummary(src.groupId, made.summary, made.source));
    }

    if (job.sentAt) return { note: 'email already sent by an earlier attempt' };
    const to = alertRecipients(src.alertEmails, d.config.alertEmailTo);
    if (!to.length) return { note: 'no recipients: set the project alertEmails or ALERT_EMAIL_TO; nothing sent' };

    const mail = renderCrashAlert({ ...src, summary, summarySource: source }, d.config.publicUrl);
    await d.mailer.send({
      from: d.config.alertEmailFrom, to, subject: mail.subject, text: mail.text, html: mail.html, messageId: mail.messageId,
      headers: { 'X-Flightrec-Project': src.projectId, 'X-Flightrec-Crash-Group': src.groupId },
    });
    await d.outbox.markSent(job.id, mail.messageId);
    return { note: `sent to ${to.length} recipient${to.length === 1 ? '' : 's'} via ${d.mailer.kind}` };
  };
}
