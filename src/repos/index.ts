import type { Postgres, Queryable } from '../stores/postgres/port.ts';
import type { ClickHouse } from '../stores/clickhouse/port.ts';
import type { QueueBudget } from '../stores/clickhouse/batcher.ts';
import type { Clock } from '../lib/time.ts';
import { outboxRepo } from './outbox.ts';
import { projectIdsOfTeams, projectsRepo } from './projects.ts';
import { apiKeysRepo, keysOnSuspension } from './apiKeys.ts';
import { accountsRepo } from './accounts.ts';
import { alertRecipientsRepo } from './alertRecipients.ts';
import { crashGroupAlerts, crashGroupsRepo } from './crashGroups/index.ts';
import { aiUsageRepo } from './aiUsage.ts';
import { alertRulesRepo } from './alertRules.ts';
import { alertRuleStateRepo } from './alertRuleState.ts';
import { webhooksRepo } from './webhooks.ts';
import { webhookDeliveriesRepo } from './webhookDeliveries.ts';
import { mailLogRepo } from './mailLog.ts';
import { artifactsRepo } from './artifacts.ts';
import { crashGroupActivityRepo } from './crashGroupActivity.ts';
import { eventsRepo } from './events.ts';
import { networkLogsRepo } from './networkLogs.ts';
import { crashOccurrencesRepo } from './crashOccurrences.ts';
import { sessionFactsRepo } from './sessionFacts.ts';
import { releaseHealthRepo } from './releaseHealth.ts';
import { crashInsightsRepo } from './crashInsights.ts';
import { sessionsRepo } from './sessions.ts';

/**
 * The Postgres repos, each built once per process (src/compose.ts): the edge's services and the
 * alert worker share these instances. A standalone worker (`npm run worker`) builds the same set
 * on its own Postgres. `clock` is the outbox's (leases and due times; tests move it).
 */
export function postgresRepos(pg: Postgres, opts: { changeLagMs: number; clock?: Clock }) {
  return {
    pg,
    outbox: outboxRepo(pg, opts.clock),
    projects: projectsRepo(pg),
    apiKeys: apiKeysRepo(pg),
    accounts: accountsRepo(pg, {
      // A suspension turns off the keys of the projects of the teams the user owns, in its own transaction.
      suspend: async (q: Queryable, teamIds: string[]) =>
        keysOnSuspension.suspend(q, await projectIdsOfTeams(q, teamIds)),
      unsuspend: async (q: Queryable, teamIds: string[]) =>
        keysOnSuspension.unsuspend(q, await projectIdsOfTeams(q, teamIds)),
    }),
    recipients: alertRecipientsRepo(pg),
    crashGroups: crashGroupsRepo(pg, { changeLagMs: opts.changeLagMs }),
    groupAlerts: crashGroupAlerts(pg),
    aiUsage: aiUsageRepo(pg),
    alertRules: alertRulesRepo(pg),
    ruleState: alertRuleStateRepo(pg),
    webhooks: webhooksRepo(pg),
    deliveries: webhookDeliveriesRepo(pg),
    mailLog: mailLogRepo(pg),
  };
}

export type PostgresRepos = ReturnType<typeof postgresRepos>;

/**
 * Every repo of an API process, each built once: the Postgres ones (shared with the worker),
 * the ClickHouse ones (their group-commit writers share `budget`: 503 past it), and the
 * sessions, which count their events in ClickHouse. The ingest writer and the crash-occurrence
 * export are built beside them by src/compose.ts and src/services/index.ts (the spool wraps the
 * one; the other reads through the crash-group service).
 */
export function serverRepos(
  pg: PostgresRepos,
  ch: ClickHouse,
  budget: QueueBudget,
  opts: { changeLagMs: number; releaseDayQuietMs: number },
) {
  const events = eventsRepo(ch);
  return {
    ...pg,
    artifacts: artifactsRepo(pg.pg),
    activity: crashGroupActivityRepo(pg.pg),
    events,
    networkLogs: networkLogsRepo(ch),
    occurrences: crashOccurrencesRepo(ch, budget),
    sessionFacts: sessionFactsRepo(ch, budget),
    releaseHealth: releaseHealthRepo(ch, { quietMs: opts.releaseDayQuietMs }),
    crashInsights: crashInsightsRepo(ch),
    sessions: sessionsRepo(pg.pg, events.countBySession, opts),
  };
}

export type ServerRepos = ReturnType<typeof serverRepos>;
