import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startSmtpServer, type TestSmtp } from '../helpers/smtp.ts';
import { manualClock } from '../helpers/wait.ts';
import { crash, sessionStart } from '../helpers/payloads.ts';
import type { Config } from '../../src/config.ts';
import { outboxRepo } from '../../src/repos/outbox.ts';
import { alertCrashes, alertLimits, crashAlertJob } from '../../src/workers/crashAlertJob.ts';
import { createMailer, mailGate, type Mailer } from '../../src/workers/mailer.ts';
import { createSummarizer } from '../../src/workers/summary.ts';
import { createAlertWorker } from '../../src/workers/index.ts';
import { resolveSecretsKey } from '../../src/services/secretsKey.ts';
import { postgresRepos } from '../../src/repos/index.ts';
import { silentLog } from '../../src/lib/log.ts';

// Workers are driven by hand here (RUN_WORKER=false), so each step of a job's life is visible,
// on a clock the test moves (leases and backoffs run out without waiting for them).
let s: TestServer;
let smtp: TestSmtp;
const LEASE_MS = 1500;

beforeAll(async () => {
  smtp = await startSmtpServer();
  s = await startTestServer({ RUN_WORKER: 'false', SMTP_URL: smtp.url, ALERT_EMAIL_TO: 'oncall@example.com' });
});
afterAll(async () => {
  await s?.close();
  await smtp?.close();
});

function config(outbox: Partial<Config['outbox']> = {}): Config {
  const c = s.svc.config;
  return { ...c, outbox: { ...c.outbox, leaseMs: LEASE_MS, pollMs: 60_000, ...outbox } };
}

/** A new crash group (and its pending job) in a new project; returns the group id. */
async function newGroup(): Promise<string> {
  const p = await s.createProject();
  const st = sessionStart();
  await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st });
  const r = await s.app.inject({
    method: 'POST',
    url: '/ingest/crash',
    headers: p.auth,
    payload: crash(st.sessionId, { stackTrace: `at ${randomUUID()} (x.js:1:1)` }),
  });
  expect(r.statusCode).toBe(201);
  const g = await (await s.stores()).pg.query<{ id: string }>('SELECT id FROM crash_groups WHERE project_id = $1', [
    p.projectId,
  ]);
  return g.rows[0]!.id;
}

const mailsFor = (groupId: string) =>
  smtp.mails.filter((m) => m.headers['message-id'] === `<crash-group-${groupId}@flightrec>`);
type Clock = ReturnType<typeof manualClock>;
const repo = (clock?: Clock) => outboxRepo(s.svc.stores.pg, clock);
/** The process's repos with the outbox on `clock` (a worker of its own, as another process would have). */
const reposOn = (clock?: Clock) => postgresRepos(s.svc.stores.pg, { changeLagMs: 0, clock });
const worker = (clock: Clock, outbox: Partial<Config['outbox']> = {}) =>
  createAlertWorker(
    config(outbox),
    { repos: reposOn(clock), secretsKey: resolveSecretsKey(s.svc.config).key, clock },
    silentLog,
  );

/** Plays a worker that claims the job, runs it with `mailer`, and then dies: nothing more is recorded. */
async function runAndDie(mailer: Mailer, groupId: string, clock: Clock) {
  const [job] = await repo(clock).claim(10, LEASE_MS, 8);
  expect(job?.groupId).toBe(groupId);
  const run = crashAlertJob({
    config: config(),
    crashes: alertCrashes(s.repos),
    outbox: repo(clock),
    summarize: createSummarizer(config(), silentLog),
    mailer,
    gate: mailGate(s.repos.mailLog, config().mailCaps),
    ...alertLimits(s.repos, config()),
  });
  return run(job!);
}

describe('alert outbox under failures', () => {
  it('a worker killed between sending and recording: one repeat, after the lease, with the same Message-ID', async () => {
    const groupId = await newGroup();
    const clock = manualClock();
    const real = createMailer(config());
    const dying: Mailer = {
      kind: 'smtp',
      async send(m) {
        await real.send(m);
        throw new Error('process killed right after the SMTP server accepted the message');
      },
      close: () => real.close(),
    };
    await expect(runAndDie(dying, groupId, clock)).rejects.toThrow(/killed/);
    expect(mailsFor(groupId)).toHaveLength(1);

    const w = worker(clock);
    // The dead worker's lease still holds: nobody retakes the job yet.
    clock.advance(LEASE_MS - 100);
    expect(await w.worker.runDue()).toBe(0);
    clock.advance(200);
    expect(await w.worker.runDue()).toBe(1);
    const mails = mailsFor(groupId);
    expect(mails).toHaveLength(2);
    expect(mails[0]!.headers['message-id']).toBe(mails[1]!.headers['message-id']);
    const [row] = await repo().byGroup(groupId);
    expect(row).toMatchObject({ status: 'done', attempts: 2, messageId: `<crash-group-${groupId}@flightrec>` });

    // Recorded now: no further send, ever.
    clock.advance(LEASE_MS + 200);
    expect(await w.worker.runDue()).toBe(0);
    expect(mailsFor(groupId)).toHaveLength(2);
    await w.stop();
    real.close();
  });

  it('a worker killed after recording the send but before finishing: no repeat', async () => {
    const groupId = await newGroup();
    const clock = manualClock();
    const real = createMailer(config());
    await runAndDie(real, groupId, clock); // sent and marked sent, then the worker vanished before `complete`
    expect(mailsFor(groupId)).toHaveLength(1);
    clock.advance(LEASE_MS + 200);
    const w = worker(clock);
    expect(await w.worker.runDue()).toBe(1);
    expect(mailsFor(groupId)).toHaveLength(1);
    const [row] = await repo().byGroup(groupId);
    expect(row).toMatchObject({ status: 'done', attempts: 2, note: 'email already sent by an earlier attempt' });
    await w.stop();
    real.close();
  });

  it('several workers at once run each job exactly once', async () => {
    const groups = [];
    for (let i = 0; i < 8; i++) groups.push(await newGroup());
    const workers = Array.from({ length: 4 }, () =>
      createAlertWorker(config(), { repos: reposOn(), secretsKey: resolveSecretsKey(s.svc.config).key }, silentLog),
    );
    const ran = await Promise.all(workers.map((w) => w.worker.runDue()));
    expect(ran.reduce((a, b) => a + b, 0)).toBe(8);
    for (const g of groups) {
      expect(mailsFor(g)).toHaveLength(1);
      expect((await repo().byGroup(g))[0]).toMatchObject({ status: 'done', attempts: 1 });
    }
    await Promise.all(workers.map((w) => w.stop()));
  });

  it('retries a refused send with exponential backoff and gives up at the cap', async () => {
    const groupId = await newGroup();
    smtp.refuse = '451 mailbox busy, try later';
    const clock = manualClock();
    const w = worker(clock, { maxAttempts: 3, backoffBaseMs: 800, backoffMaxMs: 10_000 });
    try {
      expect(await w.worker.runDue()).toBe(1); // attempt 1 fails
      expect(await w.worker.runDue()).toBe(0); // not due for 800 ms
      let [row] = await repo().byGroup(groupId);
      expect(row).toMatchObject({ status: 'pending', attempts: 1 });
      expect(row!.lastError).toMatch(/mailbox busy/);

      clock.advance(900);
      expect(await w.worker.runDue()).toBe(1); // attempt 2 fails; next wait doubles to 1600 ms
      clock.advance(900);
      expect(await w.worker.runDue()).toBe(0);
      clock.advance(800);
      expect(await w.worker.runDue()).toBe(1); // attempt 3 fails: the cap
      [row] = await repo().byGroup(groupId);
      expect(row).toMatchObject({ status: 'failed', attempts: 3, sentAt: null });

      smtp.refuse = null;
      clock.advance(200);
      expect(await w.worker.runDue()).toBe(0); // a failed job stays failed
      expect(mailsFor(groupId)).toHaveLength(0);
      // The summary step had succeeded and is kept for the group.
      expect(
        (await s.svc.crashGroups.view(
          (
            await (
              await s.stores()
            ).pg.query<{ project_id: string }>('SELECT project_id FROM crash_groups WHERE id = $1', [groupId])
          ).rows[0]!.project_id,
          groupId,
        ))!.summarySource,
      ).toBe('deterministic');
    } finally {
      smtp.refuse = null;
      await w.stop();
    }
  });

  it('fails a job whose last allowed attempt died with its worker', async () => {
    const groupId = await newGroup();
    const clock = manualClock();
    const [job] = await repo(clock).claim(10, 300, 1); // claimed as attempt 1 of 1, then the worker vanished
    expect(job?.groupId).toBe(groupId);
    clock.advance(400);
    const w = worker(clock, { maxAttempts: 1 });
    expect(await w.worker.runDue()).toBe(0);
    const [row] = await repo().byGroup(groupId);
    expect(row).toMatchObject({ status: 'failed', attempts: 1 });
    expect(row!.lastError).toMatch(/retry cap reached/);
    expect(mailsFor(groupId)).toHaveLength(0);
    await w.stop();
  });
});
