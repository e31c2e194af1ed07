import type { OutboxJob, OutboxLaneHead, OutboxRepo } from '../repos/outbox.ts';
import { afterFailure, type BackoffPolicy } from '../domain/outboxBackoff.ts';
import type { WorkerLog } from './log.ts';
import { loggableError } from '../lib/log.ts';
import { DeferJobError, PermanentJobError } from '../pipeline/errors.ts';
import { present } from '../lib/invariant.ts';

/** Runs one job; its note is stored with the outcome (e.g. why nothing was sent). */
export type JobHandler = (job: OutboxJob) => Promise<{ note?: string | null } | undefined>;

export interface OutboxWorkerOptions extends BackoffPolicy {
  pollMs: number;
  leaseMs: number;
  /** Jobs run at once by this worker (OUTBOX_CONCURRENCY). */
  concurrency?: number;
  /** A project's webhook deliveries run at once (OUTBOX_PROJECT_CONCURRENCY); one per webhook, its emails one at a time beside them. */
  projectConcurrency?: number;
}

// The jobs' failure vocabulary belongs to the one error policy (src/pipeline/errors.ts).
export { DeferJobError, PermanentJobError };

/** Work done at the start of every round besides the jobs (e.g. confirmation emails). */
export type Sweep = () => Promise<void>;

/**
 * Polls the alert outbox (and wakes early when told a job was enqueued), claims due jobs with a
 * lease, runs them, and records each outcome under that lease. Several workers, in one process
 * or many, can run against one database.
 */
export class OutboxWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(
    /** The outbox, on the process's clock (leases and due times; tests move it). */
    readonly repo: OutboxRepo,
    private readonly handlers: Record<string, JobHandler>,
    private readonly opts: OutboxWorkerOptions,
    private readonly log: WorkerLog,
    private readonly sweeps: Sweep[] = [],
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.wake();
  }

  /** Asks for a round soon; cheap and synchronous, so ingestion can call it without waiting. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      this.kick?.();
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.loop(), 0);
  }

  /** Stops polling and waits for the jobs in hand; an unfinished one would be retaken after its lease anyway. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private loop(): void {
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.runDue();
        } catch (err) {
          this.log.error({ err: loggableError(err) }, 'outbox round failed; retrying at the next poll');
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.running = undefined;
      // A wake that came in as the round was ending runs at once, not a poll later.
      if (!this.stopped) this.timer = setTimeout(() => this.loop(), this.again ? 0 : this.opts.pollMs);
    });
  }

  /** Set while a round waits on jobs in flight: a wake or the poll timer ends the wait, to claim more. */
  private kick: (() => void) | undefined;

  /**
   * Runs every job that is due now and returns how many ran. Jobs run side by side through a fair
   * queue (docs/alerts.md, "Delivery queue"): each lane (one webhook; a project's emails) runs one
   * job at a time and a project at most `projectConcurrency` webhook deliveries, both across
   * workers (the lane heads say what every worker has leased), the worker at most
   * `concurrency` jobs; the claim takes lanes round-robin across projects. So a receiver that
   * never answers holds one lane of its project until its timeout, and no other project's alerts.
   */
  async runDue(): Promise<number> {
    await this.repo.failAbandoned(this.opts.maxAttempts);
    for (const sweep of this.sweeps) {
      await sweep().catch((err: unknown) =>
        this.log.error({ err: loggableError(err) }, 'outbox sweep failed; retrying at the next poll'),
      );
    }
    const limit = Math.max(1, this.opts.concurrency ?? 8);
    const perProject = Math.max(1, this.opts.projectConcurrency ?? 2);
    const inFlight = new Map<number, Promise<void>>();
    const lanes = new Set<string>();
    const projectHooks = new Map<string, number>();
    let ran = 0;
    for (;;) {
      const free = limit - inFlight.size;
      let started = 0;
      if (free > 0) {
        const candidates = await this.repo.laneHeads(Math.max(4 * limit, 32), this.opts.maxAttempts);
        const pick: OutboxLaneHead[] = [];
        const takenLanes = new Set<string>();
        const takenHooks = new Map<string, number>();
        for (const c of candidates) {
          if (pick.length >= free) break;
          if (lanes.has(c.lane) || takenLanes.has(c.lane)) continue;
          // Leased by every worker (this one's included), or this one's own if a lease it still runs lapsed.
          const inHand = Math.max(projectHooks.get(c.projectId) ?? 0, c.projectHooksLeased);
          const hooks = inHand + (takenHooks.get(c.projectId) ?? 0);
          if (c.webhookId && hooks >= perProject) continue;
          pick.push(c);
          takenLanes.add(c.lane);
          if (c.webhookId) takenHooks.set(c.projectId, (takenHooks.get(c.projectId) ?? 0) + 1);
        }
        const jobs = pick.length
          ? await this.repo.claimIds(
              pick.map((c) => c.id),
              this.opts.leaseMs,
              this.opts.maxAttempts,
            )
          : [];
        const laneOf = new Map(pick.map((c) => [c.id, c]));
        for (const job of jobs) {
          const head = present(laneOf.get(job.id), `the candidate of claimed job ${job.id}`);
          lanes.add(head.lane);
          if (head.webhookId) projectHooks.set(head.projectId, (projectHooks.get(head.projectId) ?? 0) + 1);
          const run = this.runJob(job).finally(() => {
            inFlight.delete(job.id);
            lanes.delete(head.lane);
            if (head.webhookId) projectHooks.set(head.projectId, (projectHooks.get(head.projectId) ?? 1) - 1);
          });
          inFlight.set(job.id, run);
          started++;
        }
        ran += jobs.length;
      }
      if (inFlight.size === 0 && started === 0) return ran;
      if (started > 0 && inFlight.size < limit) continue;
      // Wait for a job to end, a wake (a job enqueued), or the poll (a retry come due), then claim again.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        ...inFlight.values(),
        new Promise<void>((resolve) => {
          this.kick = resolve;
          timer = setTimeout(resolve, this.opts.pollMs);
        }),
      ]);
      clearTimeout(timer);
      this.kick = undefined;
    }
  }

  async runJob(job: OutboxJob): Promise<void> {
    // Long jobs keep their lease; a dead worker's lease runs out and another worker retakes the job.
    const heartbeat = setInterval(
      () => {
        // A missed extension is retried at the next beat; if the lease runs out meanwhile another
        // worker may take the job too, which the log must show.
        this.repo.extend(job, this.opts.leaseMs).catch((err: unknown) => {
          this.log.warn(
            { job: job.id, kind: job.kind, err: loggableError(err) },
            'outbox lease extension failed; retrying at the next beat',
          );
        });
      },
      Math.max(50, Math.floor(this.opts.leaseMs / 3)),
    );
    heartbeat.unref();
    try {
      const handler = this.handlers[job.kind];
      if (!handler) throw new PermanentJobError(`no handler for job kind "${job.kind}"`);
      const out = await handler(job);
      const recorded = await this.repo.complete(job, out?.note ?? null);
      this.log.info(
        { job: job.id, kind: job.kind, group: job.groupId, attempts: job.attempts, note: out?.note, recorded },
        'outbox job done',
      );
    } catch (err) {
      if (err instanceof DeferJobError) {
        await this.repo.defer(job, err.delayMs);
        this.log.info(
          { job: job.id, kind: job.kind, group: job.groupId, retryInMs: err.delayMs },
          'outbox job deferred (alert throttling)',
        );
        return;
      }
      const msg = err instanceof Error ? err.message : String(err);
      const next =
        err instanceof PermanentJobError ? ({ action: 'give-up' } as const) : afterFailure(job.attempts, this.opts);
      if (next.action === 'give-up') {
        await this.repo.fail(job, msg);
        this.log.error(
          { job: job.id, kind: job.kind, group: job.groupId, attempts: job.attempts, err: loggableError(err) },
          'outbox job failed for good',
        );
      } else {
        await this.repo.retryLater(job, msg, next.delayMs);
        this.log.warn(
          {
            job: job.id,
            kind: job.kind,
            group: job.groupId,
            attempts: job.attempts,
            retryInMs: next.delayMs,
            err: loggableError(err),
          },
          'outbox job failed; will retry',
        );
      }
    } finally {
      clearInterval(heartbeat);
    }
  }
}
