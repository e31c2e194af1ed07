import type { ClickHouse } from './port.ts';
import { QueueFullError } from '../../domain/errors.ts';

// One insert in flight per table: the next block gathers everything that arrives meanwhile.
// Each insert costs the engine a fixed ~14–17 ms of CPU whatever its size, so its CPU per row
// falls with block size: 187 µs at 100-event inserts, 41 at 500, 4.2 at 10,000 (docs/bench.md).
export const INGEST_BATCH = { maxBatchRows: 100_000, maxQueuedRows: 500_000, maxConcurrent: 1 };

/**
 * The bytes of accepted requests waiting for their insert, shared by every table's batcher: a
 * burst of large bodies is refused (503) once this much memory is held, whatever the row count.
 */
export class QueueBudget {
  bytes = 0;
  constructor(readonly maxBytes: number) {}
}

interface Pending {
  /** One or more complete JSONEachRow lines, each ending in a line feed. */
  chunk: Buffer;
  rows: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for one table: the lines of concurrent requests go out in one insert, and each
 * caller's promise settles when the insert carrying its lines has committed (or failed). While
 * an insert is in flight the next batch gathers, so an idle service adds no delay and a busy
 * one makes fewer, larger inserts. The queue is bounded in rows and, through the shared
 * budget, in bytes: past either, callers are refused at once rather than held in memory.
 */
/** What a batcher reports of each insert (metrics), without knowing who listens. */
export type InsertObserver = (table: string, rows: number, bytes: number, seconds: number, ok: boolean) => void;

export class InsertBatcher {
  private queue: Pending[] = [];
  /** Rows accepted and not yet in an insert (the metrics read it). */
  queuedRows = 0;
  /** Set once by the wiring; each insert's outcome and duration. */
  observe: InsertObserver | undefined;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly ch: ClickHouse,
    readonly table: string,
    private readonly budget: QueueBudget,
    private readonly opts: { maxBatchRows: number; maxQueuedRows: number; maxConcurrent: number },
  ) {}

  add(chunk: Buffer, rows: number): Promise<void> {
    if (chunk.length === 0) return Promise.resolve();
    const busy = this.queuedRows > 0 || this.inFlight > 0;
    if (busy && (this.queuedRows + rows > this.opts.maxQueuedRows || this.budget.bytes + chunk.length > this.budget.maxBytes)) {
      return Promise.reject(new QueueFullError());
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ chunk, rows, resolve, reject });
      this.queuedRows += rows;
      this.budget.bytes += chunk.length;
      this.pump();
    });
  }

  /** Resolves once everything queued so far has been written (or has failed). */
  async drain(): Promise<void> {
    if (this.queue.length === 0 && this.inFlight === 0) return;
    await new Promise<void>((r) => this.idleWaiters.push(r));
  }

  /**
   * A shared insert failed while the store is up: one request's bad lines must not fail the
   * others that shared its batch. The batch is split in halves, each inserted on its own, and
   * only a half that fails again is split further, so one bad request among n costs about
   * 2·log2(n) inserts rather than n (each insert has a fixed cost of milliseconds in the
   * engine). An insert is one block, written atomically, so nothing of a failed half was written.
   */
  private async retryInHalves(batch: Pending[], err: unknown): Promise<void> {
    if (batch.length === 1) return batch[0]!.reject(err);
    const mid = Math.ceil(batch.length / 2);
    for (const half of [batch.slice(0, mid), batch.slice(mid)]) {
      const bytes = half.length === 1 ? half[0]!.chunk : Buffer.concat(half.map((p) => p.chunk));
      await this.ch.insertBytes(this.table, bytes, 'JSONEachRow').then(
        () => half.forEach((p) => p.resolve()),
        (e: unknown) => this.retryInHalves(half, e),
      );
    }
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < this.opts.maxConcurrent) {
      const batch: Pending[] = [];
      let n = 0;
      for (let p = this.queue[0]; p !== undefined && (n === 0 || n + p.rows <= this.opts.maxBatchRows); p = this.queue[0]) {
        this.queue.shift();
        batch.push(p);
        n += p.rows;
      }
      this.queuedRows -= n;
      this.inFlight++;
      const only = batch.length === 1 ? batch[0] : undefined;
      const bytes = only ? only.chunk : Buffer.concat(batch.map((p) => p.chunk));
      const t0 = performance.now();
      const seen = (ok: boolean) => this.observe?.(this.table, n, bytes.length, (performance.now() - t0) / 1000, ok);
      this.ch.insertBytes(this.table, bytes, 'JSONEachRow').then(
        () => {
          seen(true);
          batch.forEach((p) => p.resolve());
        },
        (err) => {
          seen(false);
          const failAll = () => batch.forEach((p) => p.reject(err));
          if (batch.length === 1) return failAll();
          // The store answers: the batch had bad lines, so find whose. It does not: all fail.
          return this.ch.ping().then(() => this.retryInHalves(batch, err), failAll);
        },
      ).finally(() => {
        this.budget.bytes -= bytes.length;
        this.inFlight--;
        this.pump();
        if (this.queue.length === 0 && this.inFlight === 0) {
          const w = this.idleWaiters;
          this.idleWaiters = [];
          w.forEach((f) => f());
        }
      });
    }
  }
}
