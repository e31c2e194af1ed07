import type { Config } from '../config.ts';
import type { Postgres } from '../stores/postgres/port.ts';
import { outboxRepo, NEW_GROUP_JOB } from '../repos/outbox.ts';
import { OutboxWorker } from './outbox.ts';
import { alertCrashes, crashAlertJob } from './crashAlertJob.ts';
import { createSummarizer, type Summarize } from './summary.ts';
import { createMailer, type Mailer } from './mailer.ts';
import type { WorkerLog } from './log.ts';
import type { Clock } from '../domain/time.ts';
import { recipientConfirmations } from './recipientConfirmations.ts';

export interface AlertWorker {
  worker: OutboxWorker;
  mailer: Mailer;
  start(): void;
  wake(): void;
  stop(): Promise<void>;
}

/** The outbox worker wired with the crash-alert job: the same in the server and in `npm run worker`. */
export function createAlertWorker(
  config: Config,
  db: Postgres,
  log: WorkerLog,
  overrides: { mailer?: Mailer; summarize?: Summarize; clock?: Clock } = {},
): AlertWorker {
  const mailer = overrides.mailer ?? createMailer(config);
  const summarize = overrides.summarize ?? createSummarizer(config, log);
  const o = config.outbox;
  const handlers = {
    [NEW_GROUP_JOB]: crashAlertJob({ config, crashes: alertCrashes(db), outbox: outboxRepo(db, overrides.clock), summarize, mailer }),
  };
  const worker = new OutboxWorker(db, handlers, {
    pollMs: o.pollMs, leaseMs: o.leaseMs, maxAttempts: o.maxAttempts, baseMs: o.backoffBaseMs, maxMs: o.backoffMaxMs, clock: overrides.clock,
  }, log, [recipientConfirmations(config, db, mailer, log)]);
  return {
    worker,
    mailer,
    start: () => worker.start(),
    wake: () => worker.wake(),
    async stop() {
      await worker.stop();
      mailer.close();
    },
  };
}
