import type { Config } from '../config.ts';
import type { Postgres } from '../stores/postgres/port.ts';
import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { outboxRepo, NEW_GROUP_JOB, WEBHOOK_JOB } from '../repos/outbox.ts';
import { OutboxWorker } from './outbox.ts';
import { alertCrashes, alertLimits, crashAlertJob } from './crashAlertJob.ts';
import { createSummarizer, type Summarize } from './summary.ts';
import { createMailer, mailGate, type Mailer } from './mailer.ts';
import { invitationMails, verificationMails } from './accountMails.ts';
import type { WorkerLog } from './log.ts';
import type { Clock } from '../lib/time.ts';
import { recipientConfirmations } from './recipientConfirmations.ts';
import { noticeJobs } from './noticeJobs.ts';
import { webhookJob } from './webhookJob.ts';
import { resolveSecretsKey } from '../services/secretsKey.ts';
import { alertRulesPass, type AlertRulesPass } from './alertRulesPass.ts';

export interface AlertWorker {
  worker: OutboxWorker;
  mailer: Mailer;
  /** The spike and crash-free rules' pass; absent without ClickHouse (a standalone worker without CLICKHOUSE_URL). */
  rules: AlertRulesPass | undefined;
  start(): void;
  wake(): void;
  stop(): Promise<void>;
}

/** The outbox worker wired with the crash-alert job: the same in the server and in `npm run worker`. */
export function createAlertWorker(
  config: Config,
  db: Postgres,
  log: WorkerLog,
  overrides: { mailer?: Mailer; summarize?: Summarize; clock?: Clock; ch?: ClickHouse } = {},
): AlertWorker {
  const mailer = overrides.mailer ?? createMailer(config);
  const summarize = overrides.summarize ?? createSummarizer(config, log);
  const o = config.outbox;
  const gate = mailGate(db, config.mailCaps);
  const handlers = {
    [NEW_GROUP_JOB]: crashAlertJob({
      config,
      crashes: alertCrashes(db),
      outbox: outboxRepo(db, overrides.clock),
      summarize,
      mailer,
      gate,
      ...alertLimits(db, config),
    }),
    ...noticeJobs({ config, db, outbox: outboxRepo(db, overrides.clock), mailer, gate, ...alertLimits(db, config) }),
    [WEBHOOK_JOB]: webhookJob({ config, db, secretsKey: resolveSecretsKey(config).key }),
  };
  const rules = overrides.ch ? alertRulesPass({ config, db, ch: overrides.ch, log, now: overrides.clock }) : undefined;
  const worker = new OutboxWorker(
    db,
    handlers,
    {
      pollMs: o.pollMs,
      leaseMs: o.leaseMs,
      maxAttempts: o.maxAttempts,
      baseMs: o.backoffBaseMs,
      maxMs: o.backoffMaxMs,
      clock: overrides.clock,
      concurrency: o.concurrency,
      projectConcurrency: o.projectConcurrency,
    },
    log,
    [
      recipientConfirmations(config, db, mailer, gate, log),
      verificationMails(config, db, mailer, gate, log),
      invitationMails(config, db, mailer, gate, log),
      ...(rules ? [rules.sweep] : []),
    ],
  );
  return {
    worker,
    mailer,
    rules,
    start: () => worker.start(),
    wake: () => worker.wake(),
    async stop() {
      await worker.stop();
      mailer.close();
    },
  };
}
