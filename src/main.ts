import { ConfigError, loadConfig } from './config.ts';
import { createServer } from './server.ts';

async function main() {
  const config = loadConfig();
  const server = await createServer(config);
  const { app } = server;
  if (server.adminTokenFile) app.log.info({ file: server.adminTokenFile }, 'admin token is in this file');
  app.log.info(
    {
      postgres: server.svc.stores.pg.kind,
      clickhouse: server.svc.stores.ch.kind,
      redis: server.svc.stores.redis ? 'redis' : 'in-process',
      dataDir: config.dataDir,
      alertWorker: server.worker ? `in-process (email: ${server.worker.mailer.kind})` : 'off (RUN_WORKER=false)',
    },
    'stores ready',
  );
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
          app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  await app.listen({ host: config.host, port: config.port });
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    console.error(`flightrec: configuration error: ${err.message}`);
  } else {
    console.error('flightrec: failed to start:', err);
  }
  process.exit(1);
});
