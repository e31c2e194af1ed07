import type { Config } from '../config.ts';
import { deferDelayMs } from '../domain/outboxBackoff.ts';
import type { PostgresRepos } from '../repos/index.ts';
import { sessionQueries } from '../repos/sessions.ts';
import type { OutboxRepo, OutboxJob } from '../repos/outbox.ts';
import type { CrashContext } from '../domain/crashSummary.ts';
import {
  DIGEST_MAX_GROUPS,
  renderCrashAlert,
  renderCrashDigest,
  type DigestGroup,
  type RenderedEmail,
} from '../domain/crashAlert.ts';
import { deterministicSummary, DETERMINISTIC_SOURCE } from '../domain/crashSummary.ts';
import { serviceSecret } from '../repos/serviceSecrets.ts';
import { UNSUBSCRIBE_SECRET, unsubscribeLink } from '../domain/unsubscribe.ts';
import { DeferJobError, PermanentJobError } from './outbox.ts';
import type { Summarize } from './summary.ts';
import type { Mailer, MailGate } from './mailer.ts';
import { alertAudience, sendToEach, type AlertAudience } from './alertMail.ts';

export interface CrashAlertDeps {
  config: Pick<Config, 'alertEmailFrom' | 'alertEmailTo' | 'publicUrl' | 'alertDigestWindowMs'>;
  crashes: AlertCrashes;
  outbox: OutboxRepo;
  summarize: Summarize;
  mailer: Mailer;
  /** The daily mail caps (per address, per account). */
  gate: MailGate;
  /** Takes one AI call of the project's daily budget; false when it is spent. */
  aiBudget: (projectId: string) => Promise<boolean>;
  /** The signed unsubscribe link of an address for a project. */
  unsubscribeLink: (projectId: string, email: string) => Promise<string>;
}

/** What the alert job needs: the group, its project, and the first occurrence's session. */
export interface AlertSource extends CrashContext {
  groupId: string;
  projectId: string;
  projectName: string;
  firstSeenAt: number;
  summary: string | null;
  summarySource: string | null;
}

export interface AlertCrashes {
  alertSource(groupId: string): Promise<AlertSource | null>;
  /** Who the project's alerts go to (workers/alertMail.ts), with ALERT_EMAIL_TO as `defaults`. */
  audience(projectId: string, defaults: string[]): Promise<AlertAudience | null>;
  storeSummary(groupId: string, summary: string, source: string): Promise<{ summary: string; source: string }>;
  /** A digest's line for a group. */
  digestLine(groupId: string): Promise<DigestGroup | null>;
  /** Throttling: null when the project's alert slot was taken for this job, else ms until it frees. */
  claimAlertSlot(projectId: string, windowMs: number, jobId: number): Promise<number | null>;
}

/** The alert job's reads and its one write, from the owners of the crash group, project and session. */
export function alertCrashes(repos: Pick<PostgresRepos, 'pg' | 'groupAlerts' | 'projects'>): AlertCrashes {
  const { pg: db, groupAlerts: groups, projects } = repos;
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
    audience: (projectId, defaults) => alertAudience(repos, projectId, { ownList: null, defaults }),
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

    // The AI is asked only by a job that holds its project's alert slot and fits the project's
    // daily budget: a burst of new groups (a digest), a project with no recipients, or a spent
    // budget get the deterministic summary, so a crash flood cannot become a flood of model calls.
    let stored = src.summary === null ? null : { summary: src.summary, source: src.summarySource ?? '' };
    const ensureSummary = async (ai: boolean): Promise<{ summary: string; source: string }> => {
      if (stored !== null) return stored;
      const made =
        ai && (await d.aiBudget(src.projectId))
          ? await d.summarize(src)
          : { summary: deterministicSummary(src), source: DETERMINISTIC_SOURCE };
      stored = await d.crashes.storeSummary(src.groupId, made.summary, made.source);
      return stored;
    };

    if (job.sentAt) {
      await ensureSummary(false);
      return { note: 'email already sent by an earlier attempt' };
    }
    if (await d.outbox.isSent(job.id)) {
      await ensureSummary(false);
      return { note: 'sent in a digest with other new groups of the project' };
    }
    const audience = await d.crashes.audience(src.projectId, d.config.alertEmailTo);
    if (!audience?.to.length) {
      await ensureSummary(false);
      return {
        note: 'no recipients: no confirmed address on the project list, no team members, no ALERT_EMAIL_TO (or all unsubscribed); nothing sent',
      };
    }

    // One alert per project per window: a group that comes while the slot is taken waits for
    // it, and whoever takes it next mails every group waiting by then in one digest.
    const wait = await d.crashes.claimAlertSlot(src.projectId, d.config.alertDigestWindowMs, job.id);
    if (wait !== null) throw new DeferJobError(deferDelayMs(wait));
    const waiting = await d.outbox.unsentAlerts(src.projectId, 1000);
    const others = waiting.filter((w) => w.id !== job.id);

    const sendEach = (mail: RenderedEmail, headers: Record<string, string>) =>
      sendToEach(d, { projectId: src.projectId, ownerId: audience.ownerId, to: audience.to, headers }, mail);

    if (others.length === 0) {
      const { summary, source } = await ensureSummary(true);
      const mail = renderCrashAlert({ ...src, summary, summarySource: source }, d.config.publicUrl);
      const how = await sendEach(mail, {
        'X-Flightrec-Project': src.projectId,
        'X-Flightrec-Crash-Group': src.groupId,
      });
      await d.outbox.markSent(job.id, mail.messageId);
      return { note: `sent to ${how}` };
    }
    await ensureSummary(false);
    const lines: DigestGroup[] = [{ groupId: src.groupId, message: src.message, firstSeenAt: src.firstSeenAt }];
    for (const w of others.slice(0, DIGEST_MAX_GROUPS - 1)) {
      const line = await d.crashes.digestLine(w.groupId);
      if (line) lines.push(line);
    }
    const mail = renderCrashDigest(
      { projectId: src.projectId, projectName: src.projectName, digestId: String(job.id) },
      lines,
      others.length + 1,
      d.config.publicUrl,
    );
    const how = await sendEach(mail, { 'X-Flightrec-Project': src.projectId });
    await d.outbox.markSentMany([job.id, ...others.map((o) => o.id)], mail.messageId);
    return { note: `digest of ${others.length + 1} groups sent to ${how}` };
  };
}

/** The alert job's budget and link signing, from Postgres (shared by every worker process). */
export function alertLimits(
  repos: Pick<PostgresRepos, 'pg' | 'aiUsage'>,
  config: Pick<Config, 'aiSummariesPerProjectPerDay' | 'publicUrl'>,
) {
  const { pg: db, aiUsage: usage } = repos;
  let secret: Promise<string> | undefined;
  return {
    aiBudget: (projectId: string) => usage.take(projectId, config.aiSummariesPerProjectPerDay),
    async unsubscribeLink(projectId: string, email: string) {
      secret ??= serviceSecret(db, UNSUBSCRIBE_SECRET).catch((err: unknown) => {
        secret = undefined;
        throw err;
      });
      return unsubscribeLink(config.publicUrl, await secret, projectId, email);
    },
  };
}
