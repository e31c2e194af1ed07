import type { Config } from '../config.ts';
import type { Postgres } from '../stores/postgres/port.ts';
import { crashGroupAlerts } from '../repos/crashGroups.ts';
import { projectsRepo } from '../repos/projects.ts';
import { sessionQueries } from '../repos/sessions.ts';
import type { OutboxRepo, OutboxJob } from '../repos/outbox.ts';
import type { CrashContext } from '../domain/crashSummary.ts';
import { renderCrashAlert } from '../domain/crashAlert.ts';
import { PermanentJobError } from './outbox.ts';
import type { Summarize } from './summary.ts';
import type { Mailer } from './mailer.ts';

export interface CrashAlertDeps {
  config: Pick<Config, 'alertEmailFrom' | 'alertEmailTo' | 'publicUrl'>;
  crashes: AlertCrashes;
  outbox: OutboxRepo;
  summarize: Summarize;
  mailer: Mailer;
}

/** What the alert job needs: the group, its project, and the first occurrence's session. */
export interface AlertSource extends CrashContext {
  groupId: string;
  projectId: string;
  projectName: string;
  alertEmails: string[] | null;
  firstSeenAt: number;
  summary: string | null;
  summarySource: string | null;
}

export interface AlertCrashes {
  alertSource(groupId: string): Promise<AlertSource | null>;
  storeSummary(groupId: string, summary: string, source: string): Promise<{ summary: string; source: string }>;
}

/** The alert job's reads and its one write, from the owners of the crash group, project and session. */
export function alertCrashes(db: Postgres): AlertCrashes {
  const groups = crashGroupAlerts(db);
  const projects = projectsRepo(db);
  return {
    async alertSource(groupId) {
      const g = await groups.alertFacts(groupId);
      if (!g) return null;
      const project = await projects.getProject(g.projectId);
      if (!project) return null;
      const s = g.firstSessionId === null ? null : await sessionQueries.deviceOf(db, g.projectId, g.firstSessionId);
      // The device of the first occurrence's session; the group's own latest values without one.
      const fromSession = s !== null && (s.platform !== null || s.app_version !== null || s.model !== null);
      return {
        groupId: g.groupId,
        projectId: g.projectId,
        projectName: project.name,
        alertEmails: project.alertEmails,
        message: g.message,
        stackHead: g.stackHead,
        isFatal: g.isFatal,
        handled: g.handled,
        firstSeenAt: g.firstSeenAt,
        summary: g.summary,
        summarySource: g.summarySource,
        platform: fromSession ? s.platform : g.platform,
        appVersion: fromSession ? s.app_version : g.appVersion,
        osVersion: fromSession ? s.os_version : g.osVersion,
        appBuildNumber: s?.app_build_number ?? null,
        deviceModel: s?.model ?? null,
        deviceBrand: s?.brand ?? null,
      };
    },
    storeSummary: groups.storeSummary,
  };
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
