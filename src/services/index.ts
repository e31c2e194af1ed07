import type { Config } from '../config.ts';
import type { Stores } from '../stores/index.ts';
import { QueueBudget } from '../stores/clickhouse/batcher.ts';
import type { Queryable } from '../stores/postgres/port.ts';
import { projectIdsOfTeams, projectsRepo } from '../repos/projects.ts';
import { apiKeysRepo, keysOnSuspension } from '../repos/apiKeys.ts';
import { sessionsRepo } from '../repos/sessions.ts';
import { crashGroupsRepo } from '../repos/crashGroups.ts';
import { crashOccurrencesRepo } from '../repos/crashOccurrences.ts';
import { crashOccurrenceExport } from '../repos/crashOccurrenceExport.ts';
import { ingestRepo } from '../repos/ingest.ts';
import { eventsRepo } from '../repos/events.ts';
import { networkLogsRepo } from '../repos/networkLogs.ts';
import { outboxRepo } from '../repos/outbox.ts';
import { accountsRepo } from '../repos/accounts.ts';
import { alertRecipientsRepo } from '../repos/alertRecipients.ts';
import { artifactsRepo } from '../repos/artifacts.ts';
import { resolveSecretsKey } from './secretsKey.ts';
import { symbolicationService } from './symbolication.ts';
import { KeyResolver } from './keyResolver.ts';
import { RateLimiter } from './rateLimiter.ts';
import { SessionFacts } from './sessionCache.ts';
import { SessionTouches } from './sessionTouches.ts';
import { StreamSlots } from './streamSlots.ts';
import { ingestion } from './ingestion.ts';
import { exportEndpoints, exportService } from './exports.ts';
import { accountsService } from './accounts.ts';
import { projectsService } from './projects.ts';
import { crashGroupsService } from './crashGroups.ts';
import { dashboardService } from './dashboard.ts';
import { teamsService } from './teams.ts';
import { createMetrics } from './metrics.ts';
import { type Log, silentLog } from '../lib/log.ts';
import { sessionFactsRepo } from '../repos/sessionFacts.ts';
import { releaseHealthRepo } from '../repos/releaseHealth.ts';
import { crashGroupActivityRepo } from '../repos/crashGroupActivity.ts';
import { releasesService } from './releases.ts';
import { crashGroupActivityService } from './crashGroupActivity.ts';
import { alertRulesService } from './alertRules.ts';
import { fingerprintRulesService } from './fingerprintRules.ts';
import { ttlCache } from './ttlCache.ts';
import { crashInsightsService } from './crashInsights.ts';
import { crashInsightsRepo } from '../repos/crashInsights.ts';
import { CrashPipeline } from '../pipeline/crashPipeline.ts';

/** Everything the HTTP edge and the workers call, wired once per process. */
export function createServices(config: Config, stores: Stores, adminToken: string, log: Log = silentLog) {
  // The bytes of accepted bodies waiting for their insert, across every group commit (503 past it).
  const budget = new QueueBudget(config.ingestQueueBytes);
  const ingest = ingestRepo(stores.ch, budget, config.spool);
  const events = eventsRepo(stores.ch);
  const networkLogs = networkLogsRepo(stores.ch);
  const projectRows = projectsRepo(stores.pg);
  const accountRows = accountsRepo(stores.pg, {
    // A suspension turns off the keys of the projects of the teams the user owns, in its own transaction.
    suspend: async (q: Queryable, teamIds: string[]) =>
      keysOnSuspension.suspend(q, await projectIdsOfTeams(q, teamIds)),
    unsuspend: async (q: Queryable, teamIds: string[]) =>
      keysOnSuspension.unsuspend(q, await projectIdsOfTeams(q, teamIds)),
  });
  // Read on every crash: kept a few seconds, dropped at once by this process's edits (the
  // dashboard's crash page reads the project's own row).
  const inAppPackages = ttlCache(5_000, (p) => projectRows.inAppPackages(p));
  const projects = projectsService(
    projectRows,
    apiKeysRepo(stores.pg),
    accountRows,
    alertRecipientsRepo(stores.pg),
    stores.pg,
    inAppPackages.forget,
  );
  const changes = { changeLagMs: config.exportSyncLagMs };
  const sessions = sessionsRepo(stores.pg, events.countBySession, changes);
  const touches = new SessionTouches(sessions.touch, config.exportTouchIntervalMs, undefined, log);
  // A group's new occurrences change its exported counters: they move its updatedAt the same
  // coalesced way as a session's events (at most once per interval, never once per occurrence).
  const crashTouches = new SessionTouches(
    (projectId, groupIds) => crashGroups.touch(projectId, groupIds),
    config.exportTouchIntervalMs,
    undefined,
    log,
  );

  const wakeups = new Set<() => void>();
  const limits = {
    ingest: new RateLimiter('ingest', config.rateLimits.ingest, stores.redis, config.redisKeyPrefix, log),
    export: new RateLimiter('export', config.rateLimits.export, stores.redis, config.redisKeyPrefix, log),
    auth: new RateLimiter('auth', config.rateLimits.auth, stores.redis, config.redisKeyPrefix, log),
    dashboard: new RateLimiter('dashboard', config.rateLimits.dashboard, stores.redis, config.redisKeyPrefix, log),
  };
  const outbox = outboxRepo(stores.pg);
  const symbols = symbolicationService(artifactsRepo(stores.pg), config.artifacts);
  const groupRows = crashGroupsRepo(stores.pg, changes);
  const occurrences = crashOccurrencesRepo(stores.ch, budget);
  const activity = crashGroupActivityRepo(stores.pg);
  const releases = releasesService({
    facts: sessionFactsRepo(stores.ch, budget),
    health: releaseHealthRepo(stores.ch),
    sessions,
    occurrences,
    activity,
    mergedKeys: groupRows.mergedKeys,
  });
  const fingerprintRules = fingerprintRulesService(stores.pg);
  const crashGroups = crashGroupsService({
    fingerprintRulesOf: (p) => fingerprintRules.rulesOf(p),
    symbols,
    groups: groupRows,
    occurrences,
    sessions,
    outbox,
    touched: (p, g) => crashTouches.mark(p, g),
    inAppPackagesOf: (p) => inAppPackages.get(p),
    crashedSession: releases.crashed,
  });
  const notifyNewGroup = () => wakeups.forEach((f) => f());
  // With the spool, crash reports are recorded by the pipeline's loader, not inside the request.
  const crashPipeline = config.crashPipeline
    ? new CrashPipeline({ record: crashGroups.record, onNewCrashGroup: notifyNewGroup }, config.crashPipeline)
    : undefined;
  return {
    config,
    stores,
    adminToken,
    projects,
    sessions,
    crashGroups,
    symbols,
    ingest,
    events,
    networkLogs,
    keys: new KeyResolver(projects, config.keyCacheTtlMs, stores.redis, config.redisKeyPrefix, log),
    limits,
    metrics: createMetrics({
      batchers: [ingest.batcher, crashGroups.batcher, releases.batcher],
      budget,
      spool: ingest.spool,
      crashPipeline,
      limiters: Object.values(limits),
      outboxBacklog: outbox.backlog,
    }),
    exports: exportService({
      endpoints: exportEndpoints({
        sessions,
        crashes: crashGroups.export,
        events: events.export,
        network: networkLogs.export,
        releases: releases.export,

        crashOccurrences: crashOccurrenceExport(stores.ch, { byKeys: groupRows.byKeys, byId: crashGroups.keysOf }),
      }),
      chunkRows: config.exportChunkRows,
      chunkBytes: config.exportChunkBytes,
    }),
    exportStreams: new StreamSlots(config.exportMaxStreams, stores.redis, config.redisKeyPrefix),
    accounts: accountsService(accountRows),
    teams: teamsService(accountRows, {
      projects: projectRows,
      keys: apiKeysRepo(stores.pg),
      recipients: alertRecipientsRepo(stores.pg),
    }),
    alertRules: alertRulesService(stores.pg, {
      allowPrivateWebhooks: config.webhooks.allowPrivate,
      maxRules: config.alertRules.maxPerProject,
      maxWebhooks: config.webhooks.maxPerProject,
      secretsKey: resolveSecretsKey(config).key,
    }),
    fingerprintRules,
    dashboard: dashboardService({
      sessions,
      crashGroups,
      events,
      networkLogs,
      inAppPackagesOf: (p) => projectRows.inAppPackages(p),
    }),
    releases,
    crashInsights: crashInsightsService({ groups: groupRows, insights: crashInsightsRepo(stores.ch) }),
    groupActivity: crashGroupActivityService({
      groups: groupRows,
      occurrences,
      activity,
      accounts: accountRows,
      projects: projectRows,
    }),
    /** Sessions whose events changed, waiting to have their updatedAt moved. */
    touches,
    /** Crash groups whose new occurrences wait to have their updatedAt moved. */
    crashTouches,
    /** Listeners told when a new crash group's job is in the outbox. */
    onNewCrashGroup: wakeups,
    /** With INGEST_SPOOL: the crash spool and its loader's steps (start, close, metrics). */
    crashPipeline,
    ingestion: ingestion({
      sessions,
      crashGroups,
      ingest,
      releases,
      facts: new SessionFacts(),
      touches,
      crashSpool: crashPipeline,
      onNewCrashGroup: notifyNewGroup,
    }),
  };
}

export type Services = ReturnType<typeof createServices>;
