import type { Config } from '../config.ts';
import { deferDelayMs } from '../domain/outboxBackoff.ts';
import {
  NEW_GROUP_WEBHOOKS_JOB,
  REGRESSION_JOB,
  REGRESSION_WEBHOOKS_JOB,
  RULE_EMAIL_JOB,
  type OutboxJob,
  type OutboxRepo,
} from '../repos/outbox.ts';
import type { PostgresRepos } from '../repos/index.ts';
import { webhookTargets } from '../repos/webhooks.ts';
import { enqueueDelivery } from '../repos/webhookDeliveries.ts';
import { crashGroupLink, DIGEST_MAX_GROUPS } from '../domain/crashAlert.ts';
import { describeFiring } from '../domain/alertRules.ts';
import { regressionNotice, renderNotices, ruleNotice, type Notice } from '../domain/alertNotices.ts';
import { deliveryBody } from '../domain/webhooks.ts';
import { derivedId } from '../domain/ids.ts';
import { DeferJobError, PermanentJobError } from './outbox.ts';
import type { Mailer, MailGate } from './mailer.ts';
import { alertAudience, sendToEach } from './alertMail.ts';

export interface NoticeJobDeps {
  config: Pick<Config, 'alertEmailFrom' | 'alertEmailTo' | 'publicUrl' | 'alertDigestWindowMs'>;
  repos: Pick<PostgresRepos, 'pg' | 'groupAlerts' | 'projects' | 'alertRules' | 'ruleState'>;
  outbox: OutboxRepo;
  mailer: Mailer;
  /** The daily mail caps, as for every alert email (src/workers/alertMail.ts). */
  gate: MailGate;
  unsubscribeLink: (projectId: string, email: string) => Promise<string>;
}

/** What a waiting notice job says, and whether it goes to the project's recipients (so it can share a digest). */
interface Prepared {
  projectId: string;
  notice: Notice;
  /** null: the project's recipients; else the rule's own list. */
  ownList: string[] | null;
}

/**
 * The alerts after a group's first occurrence: a regression (job per reopening) and a rule's
 * email (job per firing). Mail goes out the way new-group alerts do: the project's recipients
 * (src/domain/crashAlert.ts, alertRecipients), one email per project per ALERT_DIGEST_WINDOW_MS,
 * and whatever waits meanwhile in one digest. A rule with its own list mails that list
 * (confirmed addresses and members only), outside the digest.
 */
export function noticeJobs(d: NoticeJobDeps) {
  const { pg: db, groupAlerts: groups, projects, alertRules: rules, ruleState: firings } = d.repos;

  async function prepare(job: { kind: string; groupId: string; ref: string | null }): Promise<Prepared | null> {
    if (job.kind === REGRESSION_JOB) {
      const g = await groups.alertFacts(job.groupId);
      if (!g || !job.ref) return null;
      return {
        projectId: g.projectId,
        ownList: null,
        notice: regressionNotice(d.config.publicUrl, {
          projectId: g.projectId,
          groupId: g.groupId,
          message: g.message,
          appVersion: job.ref,
          summary: g.summary,
          stackHead: g.stackHead,
        }),
      };
    }
    if (job.kind === RULE_EMAIL_JOB && job.ref) {
      const f = await firings.firing(job.ref);
      const rule = f && (await rules.byId(f.ruleId));
      if (!f || !rule) return null;
      const g = f.groupId ? await groups.alertFacts(f.groupId) : null;
      const text = describeFiring(rule, {
        subject: f.subject,
        value: f.value,
        sessions: f.sessions,
        groupMessage: g?.message,
        detail: f.detail,
      });
      return {
        projectId: f.projectId,
        ownList: rule.emails,
        notice: ruleNotice(d.config.publicUrl, {
          firingId: f.id,
          projectId: f.projectId,
          groupId: f.groupId,
          text,
          firedAt: f.firedAt,
        }),
      };
    }
    return null;
  }

  /**
   * A new group, or a regression, also goes to the project's webhooks that asked for it, once:
   * the deliveries' ids derive from the job, so a retried job adds none.
   */
  async function fanOut(job: OutboxJob, event: 'crash_group.new' | 'crash_group.regressed'): Promise<number> {
    const g = await groups.alertFacts(job.groupId);
    if (!g) return 0;
    const link = crashGroupLink(d.config.publicUrl, g.projectId, g.groupId);
    const project = await projects.getProject(g.projectId);
    const message = g.message.replace(/\s+/g, ' ').slice(0, 200);
    const text =
      event === 'crash_group.new'
        ? `[${project?.name ?? 'flightrec'}] New crash: "${message}"${g.appVersion ? ` in app version ${g.appVersion}` : ''}`
        : `[${project?.name ?? 'flightrec'}] Regression: "${message}" is back in app version ${job.ref}`;
    return db.tx(async (q) => {
      const targets = await webhookTargets(q, g.projectId, { event });
      for (const h of targets) {
        const body = deliveryBody(
          h.url,
          event,
          {
            text,
            link,
            projectId: g.projectId,
            groupId: g.groupId,
            message: g.message,
            isFatal: g.isFatal,
            appVersion: event === 'crash_group.new' ? g.appVersion : job.ref,
          },
          new Date(),
        );
        await enqueueDelivery(q, g.projectId, h.id, event, body, derivedId(event, String(job.id), h.id));
      }
      return targets.length;
    });
  }

  const handler = async (job: OutboxJob): Promise<{ note: string }> => {
    const p = await prepare(job);
    // A rule deleted since it fired takes its firings with it: nothing left to say.
    if (!p) return { note: `${job.kind === RULE_EMAIL_JOB ? 'rule' : 'crash group'} deleted since; nothing sent` };
    if (job.sentAt) return { note: 'email already sent by an earlier attempt' };
    if (await d.outbox.isSent(job.id)) return { note: 'sent in a digest with other alerts of the project' };
    const r = await alertAudience(d.repos, p.projectId, { ownList: p.ownList, defaults: d.config.alertEmailTo });
    if (!r) throw new PermanentJobError(`project ${p.projectId} not found`);
    if (!r.to.length)
      return { note: 'no recipients: no confirmed address, no team members, no ALERT_EMAIL_TO; nothing sent' };

    if (p.ownList !== null) {
      const mail = renderNotices(r.projectName, [p.notice], String(job.id));
      const how = await sendToEach(
        d,
        { projectId: p.projectId, ownerId: r.ownerId, to: r.to, headers: { 'X-Flightrec-Project': p.projectId } },
        mail,
      );
      await d.outbox.markSent(job.id, mail.messageId);
      return { note: `sent to ${how}` };
    }

    const wait = await projects.claimAlertSlot(p.projectId, d.config.alertDigestWindowMs, job.id);
    if (wait !== null) throw new DeferJobError(deferDelayMs(wait));
    const carried: number[] = [job.id];
    const notices = [p.notice];
    for (const w of await d.outbox.unsentOfKinds(p.projectId, [REGRESSION_JOB, RULE_EMAIL_JOB], DIGEST_MAX_GROUPS)) {
      if (w.id === job.id) continue;
      const o = await prepare(w);
      if (o && o.ownList === null) {
        carried.push(w.id);
        notices.push(o.notice);
      }
    }
    const mail = renderNotices(r.projectName, notices, String(job.id));
    const how = await sendToEach(
      d,
      {
        projectId: p.projectId,
        ownerId: r.ownerId,
        to: r.to,
        headers: {
          'X-Flightrec-Project': p.projectId,
          ...(job.groupId ? { 'X-Flightrec-Crash-Group': job.groupId } : {}),
        },
      },
      mail,
    );
    await d.outbox.markSentMany(carried, mail.messageId);
    return { note: notices.length > 1 ? `digest of ${notices.length} alerts sent to ${how}` : `sent to ${how}` };
  };

  const webhooksOf =
    (event: 'crash_group.new' | 'crash_group.regressed') =>
    async (job: OutboxJob): Promise<{ note: string }> => {
      const n = await fanOut(job, event);
      return { note: `a delivery enqueued for ${n} webhook${n === 1 ? '' : 's'}` };
    };

  return {
    [REGRESSION_JOB]: handler,
    [RULE_EMAIL_JOB]: handler,
    [NEW_GROUP_WEBHOOKS_JOB]: webhooksOf('crash_group.new'),
    [REGRESSION_WEBHOOKS_JOB]: webhooksOf('crash_group.regressed'),
  };
}
