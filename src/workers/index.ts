import type { Config } from '../config.ts';
import type { Postgres } from '../stores/postgres/port.ts';
import { outboxRepo, NEW_GROUP_JOB } from '../repos/outbox.ts';
import { OutboxWorker } from './outbox.ts';
import { alertCrashes, alertLimits, crashAlertJob } from './crashAlertJob.ts';
import { createSummarizer, type Summarize } from './summary.ts';
import { createMailer, mailGate, type Mailer } from './mailer.ts';
import { invitationMails, verificationMails } from './accountMails.ts';
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
  const gate = mailGate(db, config.mailCaps);
  const handlers = {
    [NEW_GROUP_JOB]: crashAlertJob({ config, crashes: alertCrashes(db), outbox: outboxRepo(db, overrides.clock), summarize, mailer, gate, ...alertLimits(db, config) }),
  };
  const worker = new OutboxWorker(db, handlers, {
    pollMs: o.pollMs, leaseMs: o.leaseMs, maxAttempts: o.maxAttempts, baseMs: o.backoffBaseMs, maxMs: o.backoffMaxMs, clock: overrides.clock,
  }, log, [recipientConfirmations(config, db, mailer, gate, log), verificationMails(config, db, mailer, gate, log), invitationMails(config, db, mailer, gate, log)]);
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
