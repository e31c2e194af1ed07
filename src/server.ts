import type { FastifyInstance } from 'fastify';
import { pino, type DestinationStream } from 'pino';
import type { Config } from './config.ts';
import { openStores } from './stores/index.ts';
import { lockDataDir, setOwnerOnlyUmask, tightenModes, type DataDirLock } from './stores/dataDirLock.ts';
import { resolveSecretsKey } from './services/secretsKey.ts';
import { sealPlaintextSecrets } from './repos/webhooks.ts';
import { sealSecret } from './lib/secretBox.ts';
import type { Queryable } from './stores/postgres/port.ts';
import { createServices, type Services } from './services/index.ts';
import { moveLegacyOccurrences } from './repos/legacyCrashOccurrences.ts';
import { backfillSessionFacts } from './repos/sessionFactsBackfill.ts';
import { resolveAdminToken } from './services/adminToken.ts';
import { buildApp, type AppOptions } from './app.ts';
import { createAlertWorker, type AlertWorker } from './workers/index.ts';
import { type Log, silentLog } from './lib/log.ts';

export interface Server {
  app: FastifyInstance;
  svc: Services;
  adminTokenFile: string | undefined;
  /** The alert outbox worker, when this process runs one (RUN_WORKER, default true). */
  worker: AlertWorker | undefined;
  /** Stops taking requests, lets in-flight ones finish, flushes writes, closes the stores. */
  close(): Promise<void>;
}

/**
 * The services' logger (key invalidations, rate limiters, updatedAt stamps): they exist before
 * the app and its logger, so they get their own, at the app's level and on its stream.
 */
function servicesLog(config: Config, opts: AppOptions): Log {
  if (opts.logger === false) return silentLog;
  const stream = typeof opts.logger === 'object' ? (opts.logger as { stream?: DestinationStream }).stream : undefined;
  const options = { level: config.logLevel, base: { component: 'services' } };
  return stream ? pino(options, stream) : pino(options);
}

/** Opens the stores, wires the services and builds the HTTP app; does not listen. */
export async function createServer(config: Config, opts: AppOptions = {}): Promise<Server> {
  // Files and directories under DATA_DIR are the owner's alone (0600, 0700): PGlite's, chDB's,
  // the spool's, mail, the keys. The mask covers what the stores create from now on; what an
  // older version left readable is tightened once the lock says no other process uses it.
  setOwnerOnlyUmask();
  // Before anything under DATA_DIR is touched (the admin token file, either embedded store).
  const dirLock = config.databaseUrl && config.clickhouse ? undefined : lockDataDir(config.dataDir);
  if (dirLock) tightenModes(config.dataDir);
  try {
    return await openServer(config, opts, dirLock);
  } catch (err) {
    dirLock?.release();
    throw err;
  }
}

async function openServer(config: Config, opts: AppOptions, dirLock: DataDirLock | undefined): Promise<Server> {
  const admin = resolveAdminToken(config);
  const { key } = resolveSecretsKey(config);
  const sealSecrets = (q: Queryable) => sealPlaintextSecrets(q, (plain) => sealSecret(key, plain));
  const stores = await openStores(config, [moveLegacyOccurrences, backfillSessionFacts, sealSecrets]);
  // PGlite rewrites its relcache init files at open with modes of its own (past the umask); DATA_DIR
  // itself is 0700, so they were never reachable, but they are tightened like the rest.
  if (dirLock) tightenModes(config.dataDir);
  const svc = createServices(config, stores, admin.token, servicesLog(config, opts));
  await svc.keys.start();
  const app = await buildApp(svc, opts);
  await app.ready();
  svc.ingest.spool?.start(app.log.child({ component: 'spool' }));
  svc.crashPipeline?.start(app.log.child({ component: 'crash-pipeline' }));
  let worker: AlertWorker | undefined;
  if (config.runWorker) {
    const w = createAlertWorker(config, stores.pg, app.log.child({ component: 'outbox' }), { ch: stores.ch });
    svc.onNewCrashGroup.add(w.wake);
    w.start();
    worker = w;
  }
  let closing: Promise<void> | undefined;
  return {
    app,
    svc,
    adminTokenFile: admin.file,
    worker,
    close() {
      closing ??= (async () => {
        await app.close();
        // Spooled bodies and crash reports are loaded while the stores answer, both spools at once
        // (each within its own timeout, under the process's shutdown limit); what is left waits
        // on the volume for the next process.
        await Promise.all([svc.ingest.spool?.close(), svc.crashPipeline?.close()]);
        if (worker) {
          svc.onNewCrashGroup.delete(worker.wake);
          await worker.stop();
        }
        await Promise.all([svc.ingest.drain(), svc.crashGroups.drain(), svc.releases.drain()]);
        await Promise.all([svc.touches.flush(), svc.crashTouches.flush()]);
        await svc.keys.stop();
        await stores.close();
        if (dirLock) tightenModes(config.dataDir);
        dirLock?.release();
      })();
      return closing;
    },
  };
}
