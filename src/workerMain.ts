import { pino } from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { composeWorker } from './compose.ts';
import { loggableError } from './lib/log.ts';

/**
 * `npm run worker`: the alert outbox worker on its own, next to API processes that run with
 * RUN_WORKER=false (or alongside their workers: claims never overlap). It needs only Postgres.
 */
async function main() {
  const config = loadConfig();
  const { databaseUrl } = config;
  if (!databaseUrl) {
    throw new ConfigError(
      'the standalone worker needs DATABASE_URL (a Postgres server). The embedded PGlite database belongs to ' +
        'the one server process that opened it, so in embedded mode the worker runs inside the server: ' +
        'start it with `npm start` (RUN_WORKER defaults to true) instead of `npm run worker`.',
    );
  }
  const root = pino({ level: config.logLevel });
  const log = root.child({ component: 'outbox-worker' });
  const {
    worker: w,
    ch,
    lifecycle,
  } = await composeWorker({ ...config, databaseUrl }, (component) =>
    component === 'outbox' ? log : root.child({ component }),
  );
  await lifecycle.start();
  log.info(
    {
      email: w.mailer.kind === 'smtp' ? 'smtp (SMTP_URL)' : `.eml files under ${config.dataDir}/mail`,
      summary: config.openai ? `openai:${config.openai.model}` : 'deterministic (no OPENAI_API_KEY)',
      pollMs: config.outbox.pollMs,
      leaseMs: config.outbox.leaseMs,
      maxAttempts: config.outbox.maxAttempts,
      alertRules: ch ? `every ${config.alertRules.intervalMs} ms` : 'off (no CLICKHOUSE_URL)',
    },
    'alert outbox worker started',
  );
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => {
      log.info({ signal: sig }, 'stopping: finishing the jobs in hand');
      // The worker finishes its jobs in hand, then ClickHouse and Postgres close (src/compose.ts).
      lifecycle.stop().then(
        () => process.exit(0),
        (err) => {
          log.error({ err: loggableError(err) }, 'stop failed');
          process.exit(1);
        },
      );
    });
  }
}

main().catch((err) => {
  if (err instanceof ConfigError) console.error(`flightrec worker: configuration error: ${err.message}`);
  else console.error('flightrec worker: failed to start:', err);
  process.exit(1);
});
