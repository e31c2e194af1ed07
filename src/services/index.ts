import type { Config } from '../config.ts';
import type { Stores } from '../stores/index.ts';
import type { QueueBudget } from '../stores/clickhouse/batcher.ts';
import type { Spool } from '../stores/spool/spool.ts';
import { crashOccurrenceExport } from '../repos/crashOccurrenceExport.ts';
import type { IngestRepo } from '../repos/ingest.ts';
import type { ServerRepos } from '../repos/index.ts';
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
import { releasesService } from './releases.ts';
import { crashGroupActivityService } from './crashGroupActivity.ts';
import { alertRulesService } from './alertRules.ts';
import { fingerprintRulesService } from './fingerprintRules.ts';
import { ttlCache } from './ttlCache.ts';
import { crashInsightsService } from './crashInsights.ts';
import { CrashPipeline } from '../pipeline/crashPipeline.ts';
import { crashRecorder } from '../pipeline/recordCrashes/index.ts';

/** What src/compose.ts built before the services: the shared repos, the ingest writer and spool. */
export interface ServiceInputs {
  repos: ServerRepos;
  /** The bytes of accepted bodies waiting for their insert, across every group commit (503 past it). */
  budget: QueueBudget;
  /** The ingest writer: through the spool when there is one (src/repos/ingest.ts spooledIngest). */
  ingest: IngestRepo;
  /** With INGEST_SPOOL: the ingest spool (a store; read by readiness and metrics). */
  spool: Spool | undefined;
  /** With INGEST_SPOOL: the session facts' spool (repos.sessionFacts appends to it; metrics). */
  factsSpool: Spool | undefined;
  /** The server key webhook secrets are sealed with. */
  secretsKey: Buffer;
}

/**
 * The services the HTTP edge calls, on the repos src/compose.ts built; starting and stopping
 * what runs in the background is compose's (src/lib/lifecycle.ts).
 */
export function createServices(
  config: Config,
  stores: Stores,
  inputs: ServiceInputs,
  adminToken: string,
  log: Log = silentLog,
) {
  const { repos, budget, ingest, spool, factsSpool } = inputs;
  const { events, networkLogs, sessions, occurrences, activity } = repos;
  const projectRows = repos.projects;
  const accountRows = repos.accounts;
  // Read on every crash: kept a few seconds, dropped at once by this process's edits (the
  // dashboard's crash page reads the project's own row).
  const inAppPackages = ttlCache(5_000, (p) => projectRows.inAppPackages(p));
  const projects = projectsService(
    projectRows,
    repos.apiKeys,
    accountRows,
    repos.recipients,
    stores.pg,
    inAppPackages.forget,
  );
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
  const outbox = repos.outbox;
  const symbols = symbolicationService(repos.artifacts, config.artifacts);
  const groupRows = repos.crashGroups;
  const releases = releasesService({
    facts: repos.sessionFacts,
    health: repos.releaseHealth,
    sessions,
    occurrences,
    activity,
    mergedKeys: groupRows.mergedKeys,
  });
  const fingerprintRules = fingerprintRulesService(repos);
  const crashGroups = crashGroupsService({
    symbols,
    groups: groupRows,
    occurrences,
    sessions,
    outbox,
    touched: (p, g) => crashTouches.mark(p, g),
  });
  const crashes = crashRecorder({
    fingerprintRulesOf: (p) => fingerprintRules.rulesOf(p),
    symbols,
    groups: groupRows,
    occurrences,
    sessions,
    touched: (p, g) => crashTouches.mark(p, g),
    inAppPackagesOf: (p) => inAppPackages.get(p),
    crashedSession: releases.crashed,
  });
  const notifyNewGroup = () => {
    for (const wake of wakeups) wake();
  };
  // With the spool, crash reports are recorded by the pipeline's loader, not inside the request.
  const crashPipeline = config.crashPipeline
    ? new CrashPipeline(
        { record: crashes.record, recordBatch: crashes.recordBatch, onNewCrashGroup: notifyNewGroup },
        config.crashPipeline,
      )
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
    /** With INGEST_SPOOL: the ingest spool (readiness rides a ClickHouse outage on its room; metrics). */
    spool,
    factsSpool,
    events,
    networkLogs,
    keys: new KeyResolver(projects, config.keyCacheTtlMs, stores.redis, config.redisKeyPrefix, log),
    limits,
    metrics: createMetrics({
      batchers: [ingest.batcher, crashGroups.batcher, releases.batcher],
      budget,
      spool,
      crashPipeline,
      recountedCrashBatches: crashes.recountedBatches,
      factsSpool,
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

        crashOccurrences: crashOccurrenceExport(
          stores.ch,
          { byKeys: groupRows.byKeys, byId: crashGroups.keysOf },
          { lagMs: config.exportSyncLagMs },
        ),
      }),
      chunkRows: config.exportChunkRows,
      chunkBytes: config.exportChunkBytes,
    }),
    exportStreams: new StreamSlots(config.exportMaxStreams, stores.redis, config.redisKeyPrefix),
    accounts: accountsService(accountRows),
    teams: teamsService(accountRows, {
      projects: projectRows,
      keys: repos.apiKeys,
      recipients: repos.recipients,
    }),
    alertRules: alertRulesService(repos, {
      allowPrivateWebhooks: config.webhooks.allowPrivate,
      maxRules: config.alertRules.maxPerProject,
      maxWebhooks: config.webhooks.maxPerProject,
      secretsKey: inputs.secretsKey,
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
    crashInsights: crashInsightsService({ groups: groupRows, insights: repos.crashInsights }),
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
      crashes,
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
