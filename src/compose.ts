import type { Config } from './config.ts';
import { openStores, type Stores } from './stores/index.ts';
import { lockDataDir, setOwnerOnlyUmask, tightenModes } from './stores/dataDirLock.ts';
import { QueueBudget } from './stores/clickhouse/batcher.ts';
import { Spool } from './stores/spool/spool.ts';
import { migratePostgres } from './stores/migrations.ts';
import type { ClickHouse } from './stores/clickhouse/port.ts';
import type { Queryable } from './stores/postgres/port.ts';
import { postgresRepos, serverRepos, type ServerRepos } from './repos/index.ts';
import { flaggingSink, flagOnlyLine, ingestRepo, spooledIngest } from './repos/ingest.ts';
import { factsSpoolSink, spooledFacts } from './repos/sessionFacts.ts';
import { sealPlaintextSecrets } from './repos/webhooks.ts';
import { verifySecretsKey } from './repos/secretsKeyCheck.ts';
import { moveLegacyOccurrences } from './repos/legacyCrashOccurrences.ts';
import { backfillSessionFacts } from './repos/sessionFactsBackfill.ts';
import { createServices, type Services } from './services/index.ts';
import { resolveSecretsKey } from './services/secretsKey.ts';
import { resolveAdminToken } from './services/adminToken.ts';
import { createAlertWorker, type AlertWorker, type AlertWorkerDeps } from './workers/index.ts';
import { Lifecycle } from './lib/lifecycle.ts';
import { sealSecret } from './lib/secretBox.ts';
import type { Log } from './lib/log.ts';

/** A process's loggers: one per component (`services`, `spool`, `crash-pipeline`, `outbox`, `lifecycle`). */
export type LogOf = (component: string) => Log;

export interface Composed {
  config: Config;
  stores: Stores;
  repos: ServerRepos;
  svc: Services;
  /** The alert outbox worker, when this process runs one (RUN_WORKER, default true). */
  worker: AlertWorker | undefined;
  adminTokenFile: string | undefined;
  /** Every long-lived part in start order; `lifecycle.stop()` stops them in reverse. */
  lifecycle: Lifecycle;
}

/** Tests hand in their own mailer, summarizer or clock; production takes the config's. */
export type ComposeOverrides = Pick<AlertWorkerDeps, 'mailer' | 'summarize' | 'clock'>;

/**
 * The one composition root of an API process: stores → repos (src/repos/index.ts) → services →
 * worker, each built once, and their lifecycle. Parts stop in the reverse of this order (src/lib/lifecycle.ts):
 *
 *   data-dir lock, stores, key invalidations, updatedAt stamps, group commits, outbox worker, spools
 *
 * so at shutdown the spools load what they hold while the group commits and stores still answer,
 * the worker finishes its jobs in hand, the group commits drain into open stores, the stamps are
 * written, and the stores close before the lock is released. The caller adds its HTTP app last
 * (stopped first) and calls `lifecycle.start()`; nothing runs in the background before that.
 */
export async function compose(config: Config, logOf: LogOf, overrides: ComposeOverrides = {}): Promise<Composed> {
  const lifecycle = new Lifecycle(logOf('lifecycle'));
  try {
    return await build(config, logOf, overrides, lifecycle);
  } catch (err) {
    // What was opened before the failure is closed: the stores, the spool's lock, DATA_DIR's lock.
    await lifecycle.stop().catch(() => undefined);
    throw err;
  }
}

async function build(config: Config, logOf: LogOf, overrides: ComposeOverrides, lifecycle: Lifecycle) {
  // Files and directories under DATA_DIR are the owner's alone (0600, 0700): PGlite's, chDB's,
  // the spool's, mail, the keys. The mask covers what the stores create from now on; what an
  // older version left readable is tightened once the lock says no other process uses it.
  setOwnerOnlyUmask();
  // Before anything under DATA_DIR is touched (the admin token file, either embedded store).
  const dirLock = config.databaseUrl && config.clickhouse ? undefined : lockDataDir(config.dataDir);
  if (dirLock) {
    tightenModes(config.dataDir);
    lifecycle.add({
      name: 'data-dir lock',
      stop() {
        tightenModes(config.dataDir);
        dirLock.release();
      },
    });
  }

  const admin = resolveAdminToken(config);
  const { key: secretsKey } = resolveSecretsKey(config);
  const sealSecrets = (q: Queryable) => sealPlaintextSecrets(q, (plain) => sealSecret(secretsKey, plain));
  // The key is checked before anything is sealed with it.
  const stores = await openStores(config, [
    (q) => verifySecretsKey(q, secretsKey),
    moveLegacyOccurrences,
    backfillSessionFacts,
    sealSecrets,
  ]);
  lifecycle.add({ name: 'stores', stop: () => stores.close() });
  // PGlite rewrites its relcache init files at open with modes of its own (past the umask); DATA_DIR
  // itself is 0700, so they were never reachable, but they are tightened like the rest.
  if (dirLock) tightenModes(config.dataDir);

  const changes = { changeLagMs: config.exportSyncLagMs };
  // The bytes of accepted bodies waiting for their insert, across every group commit (503 past it).
  const budget = new QueueBudget(config.ingestQueueBytes);
  const built = serverRepos(postgresRepos(stores.pg, { ...changes, clock: overrides.clock }), stores.ch, budget, {
    ...changes,
    releaseDayQuietMs: config.releaseDayQuietMs,
  });
  const direct = ingestRepo(stores.ch, budget);
  // The spools are stores of their own (each holds its directory's lock from construction on);
  // their loaders insert through the repos' group commits.
  // The loader sets the network-error flags its lines carry; those Postgres does not take wait
  // in this same spool, appended again.
  const spool: Spool | undefined = config.spool
    ? new Spool(
        config.spool,
        flaggingSink(direct.spoolSink, {
          flag: (s) => built.sessions.markNetworkErrors(s).then(() => undefined),
          keep: async (s) => {
            await Promise.all(s.map((x) => spool?.append(flagOnlyLine(x), 0)));
          },
          log: logOf('spool'),
        }),
      )
    : undefined;
  const ingest = spool ? spooledIngest(direct, spool) : direct;
  const factsSpool = config.factsSpool ? new Spool(config.factsSpool, factsSpoolSink(built.sessionFacts)) : undefined;
  const repos = factsSpool ? { ...built, sessionFacts: spooledFacts(built.sessionFacts, factsSpool) } : built;
  let crashPipeline: Services['crashPipeline'];
  // Spooled bodies, crash reports and facts are loaded while the stores answer (each spool within
  // its own timeout, under the process's shutdown limit); what is left waits on the volume for
  // the next process. The crash loader appends facts (a session's first fatal crash): the facts
  // spool closes after it.
  const closeSpools = async () => {
    await Promise.all([
      spool?.close(),
      (async () => {
        await crashPipeline?.close();
        await factsSpool?.close();
      })(),
    ]);
  };
  let svc: Services;
  let worker: AlertWorker | undefined;
  try {
    svc = createServices(
      config,
      stores,
      { repos, budget, ingest, spool, factsSpool, secretsKey },
      admin.token,
      logOf('services'),
    );
    crashPipeline = svc.crashPipeline;
    worker = config.runWorker
      ? createAlertWorker(config, { repos, secretsKey, ch: stores.ch, ...overrides }, logOf('outbox'))
      : undefined;
  } catch (err) {
    // The spools hold their directories' locks from construction: released before the stores close.
    await closeSpools().catch(() => undefined);
    throw err;
  }

  const { keys, touches, crashTouches, releases, crashGroups, onNewCrashGroup } = svc;
  lifecycle.add({ name: 'key invalidations', start: () => keys.start(), stop: () => keys.stop() });
  lifecycle.add({
    name: 'updatedAt stamps',
    stop: async () => {
      await Promise.all([touches.flush(), crashTouches.flush()]);
    },
  });
  lifecycle.add({
    name: 'group commits',
    stop: async () => {
      await Promise.all([ingest.drain(), crashGroups.drain(), releases.drain()]);
    },
  });
  if (worker) {
    const w = worker;
    onNewCrashGroup.add(w.wake);
    lifecycle.add({
      name: w.name,
      start: () => w.start(),
      stop: async () => {
        onNewCrashGroup.delete(w.wake);
        await w.stop();
      },
    });
  }
  lifecycle.add({
    name: 'spools',
    start() {
      spool?.start(logOf('spool'));
      factsSpool?.start(logOf('facts-spool'));
      crashPipeline?.start(logOf('crash-pipeline'));
    },
    stop: closeSpools,
  });

  return { config, stores, repos, svc, worker, adminTokenFile: admin.file, lifecycle };
}

export interface ComposedWorker {
  worker: AlertWorker;
  /** The ClickHouse server the spike rules read (CLICKHOUSE_URL); absent, the pass is off. */
  ch: ClickHouse | undefined;
  lifecycle: Lifecycle;
}

/**
 * The composition root of `npm run worker`: Postgres (migrated, so the worker may start first),
 * ClickHouse over HTTP when CLICKHOUSE_URL is set, the same repos and the outbox worker. Stops
 * in reverse: the worker finishes its jobs in hand, then ClickHouse and Postgres close.
 */
export async function composeWorker(config: Config & { databaseUrl: string }, logOf: LogOf): Promise<ComposedWorker> {
  const lifecycle = new Lifecycle(logOf('lifecycle'));
  try {
    // The server clients load only where a URL asks for them, as in openStores.
    const pg = await (await import('./stores/postgres/pg.ts')).openPg(config.databaseUrl);
    lifecycle.add({ name: 'postgres', stop: () => pg.close() });
    // The server normally owns the schema; migrating here too (under the same advisory lock) lets the worker start first.
    await migratePostgres(pg);
    const { key: secretsKey } = resolveSecretsKey(config);
    await pg.tx((q) => verifySecretsKey(q, secretsKey));
    // Spike rules read ClickHouse: a server's (CLICKHOUSE_URL). Without one the rules' pass runs in the API process instead.
    const ch = config.clickhouse
      ? await (await import('./stores/clickhouse/http.ts')).openClickHouseHttp({
          ...config.clickhouse,
          asyncInsert: false,
        })
      : undefined;
    if (ch) lifecycle.add({ name: 'clickhouse', stop: () => ch.close() });
    const repos = postgresRepos(pg, { changeLagMs: config.exportSyncLagMs });
    const worker = createAlertWorker(config, { repos, secretsKey, ch }, logOf('outbox'));
    lifecycle.add(worker);
    return { worker, ch, lifecycle };
  } catch (err) {
    await lifecycle.stop().catch(() => undefined);
    throw err;
  }
}
