import { pino } from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { openPg } from './stores/postgres/pg.ts';
import { migratePostgres } from './stores/migrations.ts';
import { createAlertWorker } from './workers/index.ts';
import { loggableError } from './lib/log.ts';
import { openClickHouseHttp } from './stores/clickhouse/http.ts';

/**
 * `npm run worker`: the alert outbox worker on its own, next to API processes that run with
 * RUN_WORKER=false (or alongside their workers: claims never overlap). It needs only Postgres.
 */
async function main() {
  const config = loadConfig();
  if (!config.databaseUrl) {
    throw new ConfigError(
      'the standalone worker needs DATABASE_URL (a Postgres server). The embedded PGlite database belongs to ' +
        'the one server process that opened it, so in embedded mode the worker runs inside the server: ' +
        'start it with `npm start` (RUN_WORKER defaults to true) instead of `npm run worker`.',
    );
  }
  const log = pino({ level: config.logLevel, base: { component: 'outbox-worker' } });
  const db = await openPg(config.databaseUrl);
  // The server normally owns the schema; migrating here too (under the same advisory lock) lets the worker start first.
  await migratePostgres(db);
  // Spike rules read ClickHouse: a server's (CLICKHOUSE_URL). Without one the rules' pass runs in the API process instead.
  const ch = config.clickhouse ? await openClickHouseHttp({ ...config.clickhouse, asyncInsert: false }) : undefined;
  const w = createAlertWorker(config, db, log, { ch });
  w.start();
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
      w.stop()
        .then(() => ch?.close())
        .then(() => db.close())
        .then(
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
