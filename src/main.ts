import cluster from 'node:cluster';
import http from 'node:http';
import { pino } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createServer } from './server.ts';
import { DataDirInUseError } from './stores/dataDirLock.ts';
import { loggableError } from './lib/log.ts';
import { bearerMatches } from './http/auth.ts';
import { pageOutEngineCode } from './stores/clickhouse/engineCodePages.ts';

/** One HTTP process: stores → services → app, listening until SIGTERM/SIGINT. */
async function serve(config: Config) {
  const server = await createServer(config);
  const { app } = server;
  // Under WEB_CONCURRENCY the primary asks each worker for its metrics over IPC: constructing
  // the aggregator is what installs prom-client's answering listener in a worker.
  if (cluster.isWorker) {
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([server.svc.metrics.registry]);
  }
  if (server.adminTokenFile) app.log.info({ file: server.adminTokenFile }, 'admin token is in this file');
  app.log.info(
    {
      postgres: server.svc.stores.pg.kind,
      clickhouse: server.svc.stores.ch.kind,
      clickhouseCluster: config.clickhouse?.cluster ?? null,
      redis: server.svc.stores.redis ? 'redis' : 'in-process',
      dataDir: config.dataDir,
      alertWorker: server.worker ? `in-process (email: ${server.worker.mailer.kind})` : 'off (RUN_WORKER=false)',
      ...(cluster.isWorker ? { httpWorker: cluster.worker?.id } : {}),
    },
    'stores ready',
  );
  if (!config.publicUrlSet) {
    app.log.warn(
      { publicUrl: config.publicUrl },
      `PUBLIC_URL is not set: links in mail and webhooks use ${config.publicUrl}; set PUBLIC_URL to the address people reach this server at`,
    );
  }
  if (!config.secretsKey && config.databaseUrl) {
    app.log.warn(
      'SECRETS_KEY is not set: webhook secrets are sealed with DATA_DIR/secrets.key; every process on this database needs the same key (set SECRETS_KEY)',
    );
  }
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => {
      app.log.info({ signal: sig }, 'shutting down');
      // Within an orchestrator's usual 30 s grace period: a stuck store must not hold the exit.
      setTimeout(() => {
        app.log.error('shutdown did not finish in 25 s; exiting');
        process.exit(1);
      }, 25_000).unref();
      server.close().then(
        () => process.exit(0),
        (err) => {
          app.log.error({ err: loggableError(err) }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  await app.listen({ host: config.host, port: config.port });
  // Started: the embedded engine's start-up code will not run again in this process.
  if (server.svc.stores.ch.kind === 'chdb' && config.chdbPageOut)
    app.log.info(pageOutEngineCode(), "the embedded engine's start-up code");
}

/**
 * WEB_CONCURRENCY > 1: this process only supervises. Its workers share the listening port
 * (node:cluster hands connections out round-robin), each with its own stores' connections;
 * one of them runs the alert worker (claims never overlap, but N pollers would be waste). A
 * worker that dies is started again; SIGTERM stops them all gracefully. The primary serves the
 * metrics summed over the workers on METRICS_PORT (each worker's /metrics is its own).
 */
function supervise(config: Config) {
  const log = pino({ level: config.logLevel, base: { component: 'primary' } });
  let stopping = false;
  const start = (i: number) => {
    const w = cluster.fork({ RUN_WORKER: i === 0 ? String(config.runWorker) : 'false' });
    w.on('exit', (code, signal) => {
      if (stopping) return;
      log.error({ worker: i, code, signal }, 'HTTP worker exited; starting another');
      setTimeout(() => start(i), 1000).unref();
    });
  };
  for (let i = 0; i < config.webConcurrency; i++) start(i);

  const aggregator = new AggregatorRegistry();
  const metrics = http.createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    if (config.metricsToken !== undefined && !bearerMatches(req.headers.authorization, config.metricsToken)) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"Missing or invalid metrics token"}');
      return;
    }
    aggregator.clusterMetrics().then(
      (text) => res.writeHead(200, { 'content-type': aggregator.contentType }).end(text),
      (err: unknown) =>
        res.writeHead(503, { 'content-type': 'text/plain' }).end(`metrics unavailable: ${String(err)}\n`),
    );
  });
  metrics.listen(config.metricsPort, config.host);
  log.info({ workers: config.webConcurrency, metricsPort: config.metricsPort }, 'HTTP workers starting');

  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => {
      stopping = true;
      log.info({ signal: sig }, 'stopping HTTP workers');
      metrics.close();
      const workers = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
      let left = workers.length;
      if (left === 0) process.exit(0);
      setTimeout(() => process.exit(1), 28_000).unref();
      for (const w of workers) {
        w.once('exit', () => {
          if (--left === 0) process.exit(0);
        });
        w.process.kill('SIGTERM');
      }
    });
  }
}

async function main() {
  const config = loadConfig();
  if (config.webConcurrency > 1 && cluster.isPrimary) supervise(config);
  else await serve(config);
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    console.error(`flightrec: configuration error: ${err.message}`);
  } else if (err instanceof DataDirInUseError) {
    console.error(`flightrec: ${err.message}`);
  } else {
    console.error('flightrec: failed to start:', err);
  }
  process.exit(1);
});
