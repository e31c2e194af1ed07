import type { FastifyInstance } from 'fastify';
import { pino, type DestinationStream } from 'pino';
import type { Config } from './config.ts';
import type { Services } from './services/index.ts';
import type { ServerRepos } from './repos/index.ts';
import { buildApp, type AppOptions } from './app.ts';
import type { AlertWorker } from './workers/index.ts';
import { compose, type ComposeOverrides, type LogOf } from './compose.ts';
import type { Lifecycle } from './lib/lifecycle.ts';
import { silentLog } from './lib/log.ts';

export interface Server {
  app: FastifyInstance;
  svc: Services;
  /** The process's repos, each built once, shared by the services and the worker. */
  repos: ServerRepos;
  adminTokenFile: string | undefined;
  /** The alert outbox worker, when this process runs one (RUN_WORKER, default true). */
  worker: AlertWorker | undefined;
  /** The process's parts (src/compose.ts); `close()` stops them. */
  lifecycle: Lifecycle;
  /** Stops taking requests, lets in-flight ones finish, flushes writes, closes the stores. */
  close(): Promise<void>;
}

/**
 * The loggers of the parts that exist before the app and its logger (services, spools, the
 * worker): at the app's level and on its stream, one child per component.
 */
function partLogs(config: Config, opts: AppOptions): LogOf {
  if (opts.logger === false) return () => silentLog;
  const stream = typeof opts.logger === 'object' ? (opts.logger as { stream?: DestinationStream }).stream : undefined;
  const options = { level: config.logLevel };
  const root = stream ? pino(options, stream) : pino(options);
  return (component) => root.child({ component });
}

/**
 * The composition root's parts (src/compose.ts) and the HTTP app on them, started; does not
 * listen. The app is the last part: `close()` stops it first (no new requests, in-flight ones
 * finish), then the rest in reverse order of start.
 */
export async function createServer(
  config: Config,
  opts: AppOptions = {},
  overrides: ComposeOverrides = {},
): Promise<Server> {
  const root = await compose(config, partLogs(config, opts), overrides);
  const { lifecycle } = root;
  try {
    const app = await buildApp(root.svc, opts);
    lifecycle.add({ name: 'http', stop: () => app.close() });
    await app.ready();
    await lifecycle.start();
    return {
      app,
      svc: root.svc,
      repos: root.repos,
      adminTokenFile: root.adminTokenFile,
      worker: root.worker,
      lifecycle,
      close: () => lifecycle.stop(),
    };
  } catch (err) {
    await lifecycle.stop().catch(() => undefined);
    throw err;
  }
}
