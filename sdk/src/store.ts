// The client's side of persistence: loading what an earlier run left, and saving the queue and
// the open session's buffer after changes (coalesced, one save at a time), held for this client.
import type { BatchQueue } from './batcher.js';
import { memoryPersistence, type PersistentQueue } from './persistence.js';
import type { Batch, BatchHold, FlightrecError } from './types.js';

/**
 * What a living client saves is held for it this long (`Batch.hold`), renewed every
 * HOLD_RENEW_MS while it lives: longer than the minute to which browsers slow the timers of a
 * hidden tab, so a hidden tab that lives keeps its session, and one that was killed has its
 * data sent by the next page load of another tab a few minutes later.
 */
const HOLD_MS = 300_000; // 5 min
export const HOLD_RENEW_MS = 60_000;

export interface StoreHost {
  readonly queue: BatchQueue;
  /** May anything be stored (recording on). */
  active(): boolean;
  /** The open session's buffer as it would be sealed now, and its provisional end; none if sampled out. */
  openBatches(): Batch[];
  hasSession(): boolean;
  report(e: FlightrecError): void;
}

export class Store {
  persistence: PersistentQueue = memoryPersistence();
  /** Who holds what this client saves (`Batch.hold`): the browser tab, else the app. */
  owner = 'app';
  /** The stored queue was read: saving before would overwrite it. */
  loaded = false;
  /** When the last save started (holds are renewed from it). */
  savedAt = 0;
  /** The open session's buffer changed since the last save. */
  bufferDirty = false;
  /** The save under way, if any. */
  persisting: Promise<void> | undefined;
  private dirty = false;

  constructor(private readonly host: StoreHost) {}

  async load(): Promise<void> {
    try {
      const stored = await this.persistence.load({ owner: this.owner, now: Date.now() });
      this.host.queue.prepend(stored.map(({ hold: _, ...b }) => b));
    } catch (err) {
      this.host.report({ kind: 'persistence', message: 'could not load the persisted queue', cause: err });
    }
    this.loaded = true;
    if (this.host.queue.length || this.host.hasSession()) this.schedule();
  }

  /**
   * What is saved: the sealed batches, and the open session as it would be sealed now, followed
   * by its end at the last activity. If the process is killed, the next launch sends the
   * buffer and ends the session where it was last seen; while it lives, the next save replaces
   * them. Events repeat nothing on the service if they were also sent: they are identified by
   * session and sequence number, requests by id. Batches on their way (with keepalive too: that
   * request may fail after the page is gone) are kept until known to have arrived.
   */
  snapshot(hold?: BatchHold): Batch[] {
    const out = [...this.host.queue.snapshot(), ...this.host.openBatches()];
    return hold ? out.map((b) => ({ ...b, hold })) : out;
  }

  hold(): BatchHold {
    return { owner: this.owner, until: Date.now() + HOLD_MS };
  }

  /** A living client renews its holds, or another tab would take its data for a dead tab's. */
  tick(now: number): void {
    if (this.bufferDirty) this.schedule();
    else if (now - this.savedAt >= HOLD_RENEW_MS && (this.host.queue.length > 0 || this.host.hasSession()))
      this.schedule();
  }

  schedule(): void {
    // Saving before the stored batches are loaded would overwrite them; off, nothing is stored.
    if (!this.loaded || !this.host.active()) return;
    this.dirty = true;
    this.persisting ??= (async () => {
      try {
        while (this.dirty) {
          this.dirty = false;
          this.bufferDirty = false;
          this.savedAt = Date.now();
          await this.persistence.save(this.snapshot(this.hold()));
        }
      } catch (err) {
        this.host.report({ kind: 'persistence', message: 'could not save the queue', cause: err });
      } finally {
        this.persisting = undefined;
      }
    })();
  }
}
