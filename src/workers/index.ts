import type { Config } from '../config.ts';
import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { NEW_GROUP_JOB, WEBHOOK_JOB } from '../repos/outbox.ts';
import type { PostgresRepos } from '../repos/index.ts';
import { OutboxWorker } from './outbox.ts';
import { alertCrashes, alertLimits, crashAlertJob } from './crashAlertJob.ts';
import { createSummarizer, type Summarize } from './summary.ts';
import { createMailer, mailGate, type Mailer } from './mailer.ts';
import { invitationMails, verificationMails } from './accountMails.ts';
import type { WorkerLog } from './log.ts';
import type { Clock } from '../lib/time.ts';
import type { Part } from '../lib/lifecycle.ts';
import { recipientConfirmations } from './recipientConfirmations.ts';
import { noticeJobs } from './noticeJobs.ts';
import { webhookJob } from './webhookJob.ts';
import { alertRulesPass, type AlertRulesPass } from './alertRulesPass.ts';
import { crashLedgerPrune } from './crashLedgerPrune.ts';

/** The alert outbox worker as a part of its process's lifecycle (src/compose.ts starts and stops it). */
export interface AlertWorker extends Part {
  worker: OutboxWorker;
  mailer: Mailer;
  /** The spike and crash-free rules' pass; absent without ClickHouse (a standalone worker without CLICKHOUSE_URL). */
  rules: AlertRulesPass | undefined;
  start(): void;
  wake(): void;
  /** Stops polling, waits for the jobs in hand, closes the mailer. */
  stop(): Promise<void>;
}

export interface AlertWorkerDeps {
  /** The process's Postgres repos (src/repos/index.ts), built once by src/compose.ts. */
  repos: PostgresRepos;
  /** The server key webhook secrets are sealed with (src/services/secretsKey.ts). */
  secretsKey: Buffer;
  /** Spike rules read ClickHouse; without it the rules' pass is off. */
  ch?: ClickHouse;
  mailer?: Mailer;
  summarize?: Summarize;
  /** The rules pass's and the ledger pruning's clock (the outbox's is the repo's own). */
  clock?: Clock;
}

/**
 * The outbox worker with every job kind and sweep, on the repos it is given: the same in the
 * server and in `npm run worker`.
 */
export function createAlertWorker(config: Config, d: AlertWorkerDeps, log: WorkerLog): AlertWorker {
  const { repos } = d;
  const mailer = d.mailer ?? createMailer(config);
  const summarize = d.summarize ?? createSummarizer(config, log);
  const o = config.outbox;
  const gate = mailGate(repos.mailLog, config.mailCaps);
  const limits = alertLimits(repos, config);
  const handlers = {
    [NEW_GROUP_JOB]: crashAlertJob({
      config,
      crashes: alertCrashes(repos),
      outbox: repos.outbox,
      summarize,
      mailer,
      gate,
      ...limits,
    }),
    ...noticeJobs({ config, repos, outbox: repos.outbox, mailer, gate, ...limits }),
    [WEBHOOK_JOB]: webhookJob({ config, repos, secretsKey: d.secretsKey }),
  };
  const rules = d.ch ? alertRulesPass({ config, repos, ch: d.ch, log, now: d.clock }) : undefined;
  const ledger = crashLedgerPrune({ config, pg: repos.pg, log, now: d.clock });
  const worker = new OutboxWorker(
    repos.outbox,
    handlers,
    {
      pollMs: o.pollMs,
      leaseMs: o.leaseMs,
      maxAttempts: o.maxAttempts,
      baseMs: o.backoffBaseMs,
      maxMs: o.backoffMaxMs,
      concurrency: o.concurrency,
      projectConcurrency: o.projectConcurrency,
    },
    log,
    [
      recipientConfirmations(config, repos, mailer, gate, log),
      verificationMails(config, repos.accounts, mailer, gate, log),
      invitationMails(config, repos.accounts, mailer, gate, log),
      ...(rules ? [rules.sweep] : []),
      ledger.sweep,
    ],
  );
  return {
    name: 'outbox worker',
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
