import type { Config } from '../config.ts';
import type { Postgres } from '../stores/postgres/port.ts';
import { crashGroupAlerts } from '../repos/crashGroups.ts';
import { projectsRepo } from '../repos/projects.ts';
import { sessionQueries } from '../repos/sessions.ts';
import type { OutboxRepo, OutboxJob } from '../repos/outbox.ts';
import type { CrashContext } from '../domain/crashSummary.ts';
import { alertRecipients, DIGEST_MAX_GROUPS, renderCrashAlert, renderCrashDigest, type DigestGroup } from '../domain/crashAlert.ts';
import { memberEmailsOfTeam } from '../repos/accounts.ts';
import { confirmedRecipients } from '../repos/alertRecipients.ts';
import { DeferJobError, PermanentJobError } from './outbox.ts';
import type { Summarize } from './summary.ts';
import type { Mailer } from './mailer.ts';

export interface CrashAlertDeps {
  config: Pick<Config, 'alertEmailFrom' | 'alertEmailTo' | 'publicUrl' | 'alertDigestWindowMs'>;
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
  /** Confirmed addresses of the project's list. */
  confirmedEmails: string[];
  /** The members of the project's team; null for a project of no team. */
  teamMembers: string[] | null;
  firstSeenAt: number;
  summary: string | null;
  summarySource: string | null;
}

export interface AlertCrashes {
  alertSource(groupId: string): Promise<AlertSource | null>;
  storeSummary(groupId: string, summary: string, source: string): Promise<{ summary: string; source: string }>;
  /** A digest's line for a group. */
  digestLine(groupId: string): Promise<DigestGroup | null>;
  /** Throttling: null when the project's alert slot was taken for this job, else ms until it frees. */
  claimAlertSlot(projectId: string, windowMs: number, jobId: number): Promise<number | null>;
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
      const teamId = await projects.teamOf(g.projectId);
      const s = g.firstSessionId === null ? null : await sessionQueries.deviceOf(db, g.projectId, g.firstSessionId);
      // The device of the first occurrence's session; the group's own latest values without one.
      const fromSession = s !== null && (s.platform !== null || s.app_version !== null || s.model !== null);
      return {
        groupId: g.groupId,
        projectId: g.projectId,
        projectName: project.name,
        alertEmails: project.alertEmails,
        confirmedEmails: await confirmedRecipients(db, g.projectId),
        teamMembers: teamId === null ? null : await memberEmailsOfTeam(db, teamId),
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
    async digestLine(groupId) {
      const g = await groups.alertFacts(groupId);
      return g ? { groupId: g.groupId, message: g.message, firstSeenAt: g.firstSeenAt } : null;
    },
    claimAlertSlot: projects.claimAlertSlot,
  };
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
    if (await d.outbox.isSent(job.id)) return { note: 'sent in a digest with other new groups of the project' };
    const to = alertRecipients({
      projectList: src.alertEmails, confirmed: src.confirmedEmails, teamMembers: src.teamMembers, defaults: d.config.alertEmailTo,
    });
    if (!to.length) {
      return { note: 'no recipients: no confirmed address on the project list, no team members, no ALERT_EMAIL_TO; nothing sent' };
    }

    // One alert per project per window: a group that comes while the slot is taken waits for
    // it, and whoever takes it next mails every group waiting by then in one digest.
    const wait = await d.crashes.claimAlertSlot(src.projectId, d.config.alertDigestWindowMs, job.id);
    if (wait !== null) throw new DeferJobError(Math.max(wait, 50));
    const waiting = await d.outbox.unsentAlerts(src.projectId, 1000);
    const others = waiting.filter((w) => w.id !== job.id);
    const plural = (n: number) => `${n} recipient${n === 1 ? '' : 's'}`;
    if (others.length === 0) {
      const mail = renderCrashAlert({ ...src, summary, summarySource: source }, d.config.publicUrl);
      await d.mailer.send({
        from: d.config.alertEmailFrom, to, subject: mail.subject, text: mail.text, html: mail.html, messageId: mail.messageId,
        headers: { 'X-Flightrec-Project': src.projectId, 'X-Flightrec-Crash-Group': src.groupId },
      });
      await d.outbox.markSent(job.id, mail.messageId);
      return { note: `sent to ${plural(to.length)} via ${d.mailer.kind}` };
    }
    const lines: DigestGroup[] = [{ groupId: src.groupId, message: src.message, firstSeenAt: src.firstSeenAt }];
    for (const w of others.slice(0, DIGEST_MAX_GROUPS - 1)) {
      const line = await d.crashes.digestLine(w.groupId);
      if (line) lines.push(line);
    }
    const mail = renderCrashDigest(
      { projectId: src.projectId, projectName: src.projectName, digestId: String(job.id) }, lines, others.length + 1, d.config.publicUrl,
    );
    await d.mailer.send({
      from: d.config.alertEmailFrom, to, subject: mail.subject, text: mail.text, html: mail.html, messageId: mail.messageId,
      headers: { 'X-Flightrec-Project': src.projectId },
    });
    await d.outbox.markSentMany([job.id, ...others.map((o) => o.id)], mail.messageId);
    return { note: `digest of ${others.length + 1} groups sent to ${plural(to.length)} via ${d.mailer.kind}` };
  };
}
