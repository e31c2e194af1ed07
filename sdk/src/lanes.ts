// Sending the queue: which batches may be in flight at once, what an answer does to the queue,
// and the pause and backoff after a retry cycle ran out. No timers here: the client says when.
import { outageBackoff } from './backoff.js';
import { isDroppable, type BatchQueue } from './batcher.js';
import { salvage } from './salvage.js';
import { errorMessage, type Transport } from './transport.js';
import type { Batch, FlightrecError } from './types.js';

/**
 * Batches in flight at once: in all, so that one throttled session does not stall the rest, and
 * per session, so that a burst is sent as fast as it is tracked instead of outgrowing the queue.
 */
const MAX_IN_FLIGHT = 6;
const MAX_PER_SESSION = 4;

/** What the lanes need of their client. */
export interface LanesHost {
  readonly queue: BatchQueue;
  /** Undefined only in a client disabled at construction, which sends nothing. */
  readonly transport: Transport | undefined;
  readonly flushIntervalMs: number;
  /** May anything be sent (not shut down, recording on). */
  active(): boolean;
  /** Settles once the stored queue is loaded: nothing is sent before. */
  ready(): Promise<void>;
  report(e: FlightrecError): void;
  /** The queue changed: save it. */
  persist(): void;
  /** Batch `id` left the queue for good (arrived, or refused). */
  released(id: string): void;
}

export class Lanes {
  /** Send with keepalive: the page or app may be gone before the answer. */
  keepalive = false;
  /** Set when a batch ran out of retries: sending waits for the next flush trigger. */
  paused = false;
  /** A retry or a run-out cycle since the last success: the queue then drops its oldest. */
  failing = false;
  /** When timer ticks may resume sending after the last outage. */
  resumeAt = 0;
  sentBatches = 0;
  /** Events + requests in batches refused with a non-retryable status. */
  rejected = 0;
  /** Aborting it cancels what is in flight (consent withdrawn, shut down, exit bound). */
  private abort = new AbortController();
  /** Aborted while the process is on its way out: every send then makes one last attempt. */
  last = new AbortController();
  /** Sent with keepalive on the way out of the page (still handed over until known to have arrived). */
  readonly keptAlive = new Set<string>();
  /** Consecutive retry cycles that ran out. */
  private outages = 0;
  /** Batches in flight per session, and in all. */
  private readonly perSession = new Map<string, number>();
  private inFlight = 0;
  /** Requests in flight per batch (two when one was sent again with keepalive). */
  private readonly copies = new Map<string, number>();
  private idle: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(private readonly host: LanesHost) {}

  /** Cancels the requests in flight; their batches stay queued. */
  cancel(): void {
    this.abort.abort();
    this.abort = new AbortController();
  }

  /**
   * Starts sending what may be sent; the promise settles when nothing is in flight any more
   * (the queue is empty, or sending paused). `resume` (a flush trigger) lifts the pause that
   * follows a batch running out of retries; new full batches do not.
   */
  send(resume: boolean): Promise<void> {
    if (resume) this.paused = false;
    if (!this.host.active()) return Promise.resolve();
    if (!this.idle) {
      let resolve = () => {};
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.idle = { promise, resolve };
    }
    const { promise } = this.idle;
    void this.host.ready().then(() => this.dispatch());
    return promise;
  }

  /**
   * Starts what may go: in queue order, up to MAX_PER_SESSION data batches of a session at once
   * (their sequence numbers order them on the service), while a session start, end or crash goes
   * alone, after everything before it in its session and before anything after it: a start is
   * acknowledged before its events are sent, an end goes after its last events.
   */
  private dispatch(): void {
    const queue = this.host.queue;
    if (this.host.active() && !this.paused) {
      const blocked = new Set<string>();
      for (const b of [...queue.list()]) {
        if (this.inFlight >= MAX_IN_FLIGHT) break;
        const sid = b.sessionId;
        if (blocked.has(sid)) continue;
        const barrier = !isDroppable(b);
        if (queue.inFlight.has(b.id)) {
          if (barrier) blocked.add(sid);
          continue;
        }
        const n = this.perSession.get(sid) ?? 0;
        if (barrier) {
          blocked.add(sid);
          if (n > 0) continue;
        } else if (n >= MAX_PER_SESSION) {
          blocked.add(sid);
          continue;
        }
        this.launch(b, this.keepalive);
      }
    }
    if (this.inFlight === 0 && this.idle) {
      const { resolve } = this.idle;
      this.idle = undefined;
      resolve();
    }
  }

  /** `kept`: sent with keepalive within the budget the page's drain counted, so not handed over. */
  launch(b: Batch, keepalive: boolean, kept = false): void {
    const sid = b.sessionId;
    const queue = this.host.queue;
    this.perSession.set(sid, (this.perSession.get(sid) ?? 0) + 1);
    this.inFlight++;
    this.copies.set(b.id, (this.copies.get(b.id) ?? 0) + 1);
    queue.inFlight.add(b.id);
    if (kept) this.keptAlive.add(b.id);
    this.deliver(b, keepalive)
      .catch((err: unknown) =>
        this.host.report({ kind: 'internal', message: `send: ${errorMessage(err)}`, cause: err }),
      )
      .finally(() => {
        const n = (this.perSession.get(sid) ?? 1) - 1;
        if (n > 0) this.perSession.set(sid, n);
        else this.perSession.delete(sid);
        this.inFlight--;
        const c = (this.copies.get(b.id) ?? 1) - 1;
        if (c > 0) this.copies.set(b.id, c);
        else {
          this.copies.delete(b.id);
          queue.inFlight.delete(b.id);
        }
        if (kept) this.keptAlive.delete(b.id);
        this.dispatch();
      });
  }

  private async deliver(b: Batch, keepalive: boolean): Promise<void> {
    const { host } = this;
    if (!host.transport) return;
    const r = await host.transport.send(b.path, b.body, this.abort.signal, { keepalive, last: this.last.signal });
    if (r.outcome === 'aborted') return;
    if (r.outcome !== 'failed') this.outages = 0;
    if (r.outcome === 'sent') {
      this.failing = false;
      // Sent twice (again with keepalive on the way out of a page): counted once.
      if (host.queue.remove(b.id)) this.sentBatches++;
      host.released(b.id);
    } else if (r.outcome === 'rejected') {
      if (host.queue.list().includes(b)) this.rejectedBatch(b, r.status, r.error, r.body);
      host.released(b.id);
    } else {
      this.failing = true;
      this.paused = true;
      this.outages++;
      this.resumeAt = Date.now() + outageBackoff(this.outages, host.flushIntervalMs);
      host.report({ kind: 'retry-exhausted', status: r.status, message: r.error, batch: b });
    }
    host.persist();
  }

  /** A refused batch is dropped, except what `salvage` can save (salvage.ts). */
  private rejectedBatch(b: Batch, status: number, error: string, text: string): void {
    const { host } = this;
    const saved = salvage(b, status, text);
    if (saved) {
      this.rejected += saved.lost;
      if (saved.note) host.report({ kind: 'rejected', status, message: `${error} (${saved.note})`, batch: b });
      host.queue.replace(b.id, saved.parts);
      return;
    }
    this.rejected += b.items;
    host.queue.remove(b.id);
    host.report({ kind: 'rejected', status, message: error, batch: b });
  }
}
