import type { ClickHouse, InsertOptions } from './port.ts';
import { QueueFullError } from '../../domain/errors.ts';
import { present } from '../../lib/invariant.ts';

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

/**
 * An insert failed and the store did not answer a ping afterwards: nothing is wrong with the
 * lines, so sending them again another way (serialised differently) would only cost another
 * failed insert. The caller retries later (503) or keeps them (the spool).
 */
export class StoreDownError extends Error {
  constructor(readonly cause: unknown) {
    super(`ClickHouse is unreachable: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** The store answered and refused these lines (alone in their insert): they are what failed. */
export class RowsRefusedError extends Error {
  constructor(readonly cause: unknown) {
    super(`ClickHouse refused the rows: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

interface Pending {
  /** One or more complete JSONEachRow lines, each ending in a line feed, as consecutive pieces. */
  chunks: readonly Buffer[];
  bytes: number;
  rows: number;
  /** A loader's lines (`addAll`'s `background`); a batch is background only if all of it is. */
  background: boolean;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** One entry of `addAll`: the pieces of its lines and how many rows they hold. */
export interface Lines {
  chunks: readonly Buffer[];
  rows: number;
}

const sizeOf = (chunks: readonly Buffer[]) => chunks.reduce((n, c) => n + c.length, 0);

/** A batch a request waits on is never run in the background, whatever else shares it. */
const insertOptions = (batch: readonly Pending[]): InsertOptions => ({ background: batch.every((p) => p.background) });

/** A batch that is one piece: it goes to the store as it is, with no copy. */
function onePiece(batch: readonly Pending[]): Buffer | undefined {
  const [first] = batch;
  return batch.length === 1 && first?.chunks.length === 1 ? first.chunks[0] : undefined;
}

/** The one copy of a batch's bytes: every piece of every pending entry, in order (into `target` when given). */
function concat(batch: readonly Pending[], target?: Buffer): Buffer {
  const piece = onePiece(batch);
  if (piece) return piece;
  if (target) {
    let off = 0;
    for (const p of batch) for (const c of p.chunks) off += c.copy(target, off);
    return target.subarray(0, off);
  }
  const pieces: Buffer[] = [];
  let total = 0;
  for (const p of batch) {
    for (const c of p.chunks) pieces.push(c);
    total += p.bytes;
  }
  return Buffer.concat(pieces, total);
}

/**
 * Inserts up to this size are copied into one buffer each batcher reuses (one insert in flight
 * takes it): a buffer allocated per insert lives for the insert, long enough to be promoted, and
 * promoted buffers drive V8's full collections (src/stores/spool/arenas.ts). It is free again
 * when the insert settles, which is when the store is done with the bytes: chDB's native insert
 * has returned (no abort signal or timeout is given it), the HTTP client has sent the body or
 * destroyed its request.
 */
const SCRATCH_MAX_BYTES = 16 * 1024 * 1024;
const SCRATCH_STEP = 64 * 1024;

/** What a batcher reports of each insert (metrics), without knowing who listens. */
export type InsertObserver = (table: string, rows: number, bytes: number, seconds: number, ok: boolean) => void;

/**
 * Group commit for one table: the lines of concurrent requests go out in one insert, and each
 * caller's promise settles when the insert carrying its lines has committed (or failed). While
 * an insert is in flight the next batch gathers, so an idle service adds no delay and a busy
 * one makes fewer, larger inserts. The queue is bounded in rows and, through the shared
 * budget, in bytes: past either, callers are refused at once rather than held in memory.
 *
 * A failure is typed: `StoreDownError` (the store does not answer: every entry of the insert
 * gets it) or `RowsRefusedError` (the store answered; the entry's own lines were refused, found
 * by retrying in halves).
 */
export class InsertBatcher {
  private queue: Pending[] = [];
  /** Rows accepted and not yet in an insert (the metrics read it). */
  queuedRows = 0;
  /** Set once by the wiring; each insert's outcome and duration. */
  observe: InsertObserver | undefined;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  private scratch: Buffer | undefined;
  private scratchBusy = false;

  constructor(
    private readonly ch: ClickHouse,
    readonly table: string,
    private readonly budget: QueueBudget,
    private readonly opts: { maxBatchRows: number; maxQueuedRows: number; maxConcurrent: number },
  ) {}

  /** `lines`: one buffer, or pieces that concatenated make the lines (copied once, into the insert). */
  add(lines: Buffer | readonly Buffer[], rows: number): Promise<void> {
    const chunks = Buffer.isBuffer(lines) ? [lines] : lines;
    const bytes = sizeOf(chunks);
    if (bytes === 0) return Promise.resolve();
    const busy = this.queuedRows > 0 || this.inFlight > 0;
    if (
      busy &&
      (this.queuedRows + rows > this.opts.maxQueuedRows || this.budget.bytes + bytes > this.budget.maxBytes)
    ) {
      return Promise.reject(new QueueFullError());
    }
    const done = this.enqueue(chunks, bytes, rows, false);
    this.pump();
    return done;
  }

  /**
   * Several entries queued at once, so that they share one insert (the first does not go out
   * alone as it would through `add`); no budget check: the caller (the spool's loader) holds
   * them already. One promise per entry, settled as `add`'s. `background`: see InsertOptions.
   */
  addAll(entries: readonly Lines[], opts: InsertOptions = {}): Promise<void>[] {
    const background = opts.background === true;
    const done = entries.map((e) => this.enqueue(e.chunks, sizeOf(e.chunks), e.rows, background));
    this.pump();
    return done;
  }

  private enqueue(chunks: readonly Buffer[], bytes: number, rows: number, background: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ chunks, bytes, rows, background, resolve, reject });
      this.queuedRows += rows;
      this.budget.bytes += bytes;
    });
  }

  /** Resolves once everything queued so far has been written (or has failed). */
  async drain(): Promise<void> {
    if (this.queue.length === 0 && this.inFlight === 0) return;
    await new Promise<void>((r) => this.idleWaiters.push(r));
  }

  /** After a failed insert: does the store answer? It decides which error the entries get. */
  private classify(err: unknown): Promise<StoreDownError | null> {
    return this.ch.ping().then(
      () => null,
      () => new StoreDownError(err),
    );
  }

  /**
   * A shared insert failed while the store is up: one request's bad lines must not fail the
   * others that shared its batch. The batch is split in halves, each inserted on its own, and
   * only a half that fails again is split further, so one bad request among n costs about
   * 2·log2(n) inserts rather than n (each insert has a fixed cost of milliseconds in the
   * engine). An insert is one block, written atomically, so nothing of a failed half was written.
   * Should the store stop answering meanwhile, the rest of the batch gets StoreDownError.
   */
  private async retryInHalves(batch: Pending[], err: unknown): Promise<void> {
    const [only] = batch;
    if (only && batch.length === 1) {
      only.reject(new RowsRefusedError(err));
      return;
    }
    const mid = Math.ceil(batch.length / 2);
    const halves = [batch.slice(0, mid), batch.slice(mid)];
    for (const [h, half] of halves.entries()) {
      const failed = await this.ch.insertBytes(this.table, concat(half), 'JSONEachRow', insertOptions(half)).then(
        () => {
          for (const p of half) p.resolve();
          return undefined;
        },
        (e: unknown) => e,
      );
      if (failed === undefined) continue;
      const down = await this.classify(failed);
      if (down) {
        for (const p of halves.slice(h).flat()) p.reject(down);
        return;
      }
      await this.retryInHalves(half, failed);
    }
  }

  /** The batch's bytes: its one piece as it is, else copied into the scratch buffer when it is free. */
  private bytesOf(batch: readonly Pending[], size: number): { bytes: Buffer; scratch: boolean } {
    if (this.scratchBusy || size > SCRATCH_MAX_BYTES || onePiece(batch))
      return { bytes: concat(batch), scratch: false };
    if (this.scratch === undefined || this.scratch.length < size)
      this.scratch = Buffer.allocUnsafeSlow(Math.ceil(size / SCRATCH_STEP) * SCRATCH_STEP);
    this.scratchBusy = true;
    return { bytes: concat(batch, this.scratch), scratch: true };
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < this.opts.maxConcurrent) {
      const batch: Pending[] = [];
      let n = 0;
      let size = 0;
      for (
        let p = this.queue[0];
        p !== undefined && (n === 0 || n + p.rows <= this.opts.maxBatchRows);
        p = this.queue[0]
      ) {
        this.queue.shift();
        batch.push(p);
        n += p.rows;
        size += p.bytes;
      }
      this.queuedRows -= n;
      this.inFlight++;
      const { bytes, scratch } = this.bytesOf(batch, size);
      const t0 = performance.now();
      const seen = (ok: boolean) => this.observe?.(this.table, n, bytes.length, (performance.now() - t0) / 1000, ok);
      this.ch
        .insertBytes(this.table, bytes, 'JSONEachRow', insertOptions(batch))
        .then(
          () => {
            seen(true);
            for (const p of batch) p.resolve();
          },
          async (err) => {
            seen(false);
            const down = await this.classify(err);
            if (down) {
              for (const p of batch) p.reject(down);
              return;
            }
            // The store answers: the batch had bad lines, so find whose.
            return this.retryInHalves(batch, err);
          },
        )
        .catch((err: unknown) => {
          for (const p of batch) p.reject(err);
        })
        .finally(() => {
          if (scratch) this.scratchBusy = false;
          this.budget.bytes -= size;
          this.inFlight--;
          this.pump();
          if (this.queue.length === 0 && this.inFlight === 0) {
            const w = this.idleWaiters;
            this.idleWaiters = [];
            for (const wake of w) wake();
          }
        });
    }
  }
}

/**
 * Adds items' lines in one group commit and answers the items the store refused (each alone in
 * its insert, RowsRefusedError); any other failure (the store is down) rejects the whole call.
 * The spools' loaders: what is refused is set aside, the rest tried again later.
 */
export async function addRefusable<T>(
  writer: InsertBatcher,
  items: readonly T[],
  line: (t: T) => readonly Buffer[],
  rows: (t: T) => number,
  opts: InsertOptions = {},
): Promise<{ item: T; error: unknown }[]> {
  const outcomes = await Promise.allSettled(
    writer.addAll(
      items.map((t) => ({ chunks: line(t), rows: rows(t) })),
      opts,
    ),
  );
  const refused: { item: T; error: unknown }[] = [];
  for (const [i, o] of outcomes.entries()) {
    if (o.status === 'fulfilled') continue;
    if (!(o.reason instanceof RowsRefusedError)) throw o.reason;
    refused.push({ item: present(items[i], `item ${i} (one outcome per item)`), error: o.reason });
  }
  return refused;
}
