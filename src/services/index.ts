import type { Config } from '../config.ts';
import type { Stores } from '../stores/index.ts';
import { InsertBatcher, QueueBudget } from '../stores/clickhouse/batcher.ts';
import { projectsRepo } from '../repos/projects.ts';
import { sessionsRepo } from '../repos/sessions.ts';
import { crashesRepo } from '../repos/crashes.ts';
import { KeyResolver } from './keyResolver.ts';
import { RateLimiter } from './rateLimiter.ts';
import { SessionFacts } from './sessionCache.ts';
import { ingestion } from './ingestion.ts';
import { exportService } from './exports.ts';
import { exportsRepo } from '../repos/exports/index.ts';
import { accountsRepo } from '../repos/accounts.ts';
import { dashboardRepo } from '../repos/dashboard.ts';
import { accountsService } from './accounts.ts';

/** Everything the HTTP edge and the workers call, wired once per process. */
export function createServices(config: Config, stores: Stores, adminToken: string) {
  const projects = projectsRepo(stores.pg);
  const sessions = sessionsRepo(stores.pg);
  const crashes = crashesRepo(stores.pg);
  // One insert in flight per table: the next block gathers everything that arrives meanwhile.
  // ClickHouse CPU per row (insert + the merges of the parts it creates) falls with block size:
  // 12.6 µs at 1,000 rows, 7 µs at 4,000, 4.9 µs at 20,000 (docs/bench.md).
  const batch = { maxBatchRows: 100_000, maxQueuedRows: 500_000, maxConcurrent: 1 };
  const budget = new QueueBudget(config.ingestQueueBytes);
  const eventsWriter = new InsertBatcher(stores.ch, 'events_ingest', budget, batch);
  const networkWriter = new InsertBatcher(stores.ch, 'network_ingest', budget, batch);
  const wakeups = new Set<() => void>();
  return {
    config,
    stores,
    adminToken,
    projects,
    sessions,
    crashes,
    eventsWriter,
    networkWriter,
    keys: new KeyResolver(projects, config.keyCacheTtlMs, stores.redis, config.redisKeyPrefix),
    limits: {
      ingest: new RateLimiter('ingest', config.rateLimits.ingest, stores.redis, config.redisKeyPrefix),
      export: new RateLimiter('export', config.rateLimits.export, stores.redis, config.redisKeyPrefix),
      auth: new RateLimiter('auth', config.rateLimits.auth, stores.redis, config.redisKeyPrefix),
    },
    exports: exportService({ repo: exportsRepo(stores.pg, stores.ch), sessions, chunkRows: config.exportChunkRows }),
    accounts: accountsService(accountsRepo(stores.pg)),
    dashboard: dashboardRepo(stores.pg, stores.ch),
    /** Listeners told when a new crash group's job is in the outbox. */
    onNewCrashGroup: wakeups,
    ingestion: ingestion({
      sessions, crashes, eventsWriter, networkWriter,
      facts: new SessionFacts(),
      onNewCrashGroup: () => wakeups.forEach((f) => f()),
    }),
  };
}

export type Services = ReturnType<typeof createServices>;
