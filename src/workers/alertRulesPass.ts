import type { Config } from '../config.ts';
import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { markFired } from '../repos/alertRuleState.ts';
import type { PostgresRepos } from '../repos/index.ts';
import { busyGroups } from '../repos/crashOccurrences.ts';
import { crashFreeByVersion } from '../repos/sessions.ts';
import { enqueueJob, RULE_EMAIL_JOB } from '../repos/outbox.ts';
import { webhookTargets } from '../repos/webhooks.ts';
import { enqueueDelivery } from '../repos/webhookDeliveries.ts';
import {
  crashFreePercent,
  describeFiring,
  levelsCounted,
  regressionMeasures,
  ruleTransitions,
  type AlertRule,
  type Measure,
} from '../domain/alertRules.ts';
import { crashGroupLink, releasesLink } from '../domain/crashAlert.ts';
import { deliveryBody } from '../domain/webhooks.ts';
import { loggableError } from '../lib/log.ts';
import type { Sweep } from './outbox.ts';
import type { WorkerLog } from './log.ts';

export interface AlertRulesPassDeps {
  config: Pick<Config, 'alertRules' | 'publicUrl'>;
  repos: Pick<PostgresRepos, 'pg' | 'alertRules' | 'ruleState' | 'crashGroups' | 'projects'>;
  ch: ClickHouse;
  log: WorkerLog;
  /** The pass's clock (tests move it instead of sleeping). */
  now?: () => number;
}

export interface AlertRulesPass {
  /** Evaluates every enabled rule now; returns the firings it made. */
  evaluate(): Promise<number>;
  /** The outbox worker's sweep: evaluates at most once per ALERT_RULES_INTERVAL_MS. */
  sweep: Sweep;
}

/**
 * The periodic pass over spike and crash-free rules. It measures (ClickHouse occurrences for
 * spikes, Postgres sessions for crash-free), decides with the pure crossing rules, and fires
 * each crossing in one transaction: the subject's state, the firing, its email job and its
 * webhook deliveries. The state update is conditional, so workers racing fire once.
 */
export function alertRulesPass(d: AlertRulesPassDeps): AlertRulesPass {
  const { pg: db, alertRules: rules, ruleState: state, crashGroups: groups, projects } = d.repos;
  const now = d.now ?? Date.now;
  let lastRun = -Infinity;

  async function measure(
    rule: AlertRule,
    at: number,
  ): Promise<{ measures: Measure[]; groupOf: Map<string, { id: string; message: string }> }> {
    const since = at - rule.windowMinutes * 60_000;
    if (rule.kind === 'spike') {
      const busy = await busyGroups(
        d.ch,
        rule.projectId,
        since,
        rule.threshold,
        levelsCounted(rule),
        await groups.mergedKeys(rule.projectId),
      );
      const known = await groups.byKeys(
        rule.projectId,
        busy.map((b) => b.groupKey),
      );
      // An ignored group stays quiet, as it does for every other alert.
      const groupOf = new Map(
        known.filter((g) => g.status !== 'ignored').map((g) => [g.group_key, { id: g.id, message: g.message }]),
      );
      return {
        measures: busy
          .filter((b) => groupOf.has(b.groupKey))
          .map((b) => ({ subject: b.groupKey, value: b.occurrences })),
        groupOf,
      };
    }
    const versions = await crashFreeByVersion(db, rule.projectId, since);
    if (rule.kind === 'crash_free_regression')
      return { measures: regressionMeasures(versions, rule.minSessions), groupOf: new Map() };
    const measures: Measure[] = [];
    for (const v of versions) {
      const pct = crashFreePercent(v.sessions, v.crashed, rule.minSessions);
      if (pct !== null) measures.push({ subject: v.appVersion, value: pct, sessions: v.sessions });
    }
    return { measures, groupOf: new Map() };
  }

  async function fire(
    rule: AlertRule,
    m: Measure,
    group: { id: string; message: string } | undefined,
    projectName: string,
  ): Promise<boolean> {
    const text = `[${projectName}] ${describeFiring(rule, { subject: m.subject, value: m.value, sessions: m.sessions, groupMessage: group?.message, detail: m.detail })}`;
    // a release's rule links to the Releases page, a group's to its page
    const link = group
      ? crashGroupLink(d.config.publicUrl, rule.projectId, group.id)
      : releasesLink(d.config.publicUrl, rule.projectId);
    return db.tx(async (q) => {
      const firingId = await markFired(q, rule.id, rule.projectId, m, group?.id ?? null, rule.cooldownMinutes);
      if (firingId === null) return false;
      if (rule.emails === null || rule.emails.length > 0)
        await enqueueJob(q, rule.projectId, null, RULE_EMAIL_JOB, firingId);
      for (const h of await webhookTargets(q, rule.projectId, { ids: rule.webhookIds })) {
        const body = deliveryBody(
          h.url,
          'rule.fired',
          {
            text,
            link,
            projectId: rule.projectId,
            ruleId: rule.id,
            ruleName: rule.name,
            kind: rule.kind,
            subject: m.subject,
            groupId: group?.id ?? null,
            value: m.value,
            sessions: m.sessions ?? null,
            threshold: rule.threshold,
            windowMinutes: rule.windowMinutes,
          },
          new Date(),
        );
        await enqueueDelivery(q, rule.projectId, h.id, 'rule.fired', body);
      }
      return true;
    });
  }

  async function evaluateRule(rule: AlertRule, at: number): Promise<number> {
    const { measures, groupOf } = await measure(rule, at);
    const t = ruleTransitions(rule, measures, await state.states(rule.id), at);
    await state.rearm(rule.id, t.rearm);
    if (!t.fire.length) return 0;
    const project = await projects.getProject(rule.projectId);
    let fired = 0;
    for (const m of t.fire) if (await fire(rule, m, groupOf.get(m.subject), project?.name ?? 'flightrec')) fired++;
    return fired;
  }

  async function evaluate(): Promise<number> {
    const at = now();
    lastRun = at;
    let fired = 0;
    for (const rule of await rules.enabled()) {
      try {
        fired += await evaluateRule(rule, at);
      } catch (err) {
        d.log.error(
          { rule: rule.id, err: loggableError(err) },
          'alert rule evaluation failed; retried at the next pass',
        );
      }
    }
    if (fired) d.log.info({ fired }, 'alert rules fired');
    return fired;
  }

  return {
    evaluate,
    async sweep() {
      if (now() - lastRun < d.config.alertRules.intervalMs) return;
      await evaluate();
    },
  };
}
