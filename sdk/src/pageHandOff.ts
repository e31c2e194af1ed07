// Browser: what a hidden or left page does with its queue. It sends what fits the browser's
// 64 KiB keepalive budget at once, and hands the rest (and what is not known to have arrived)
// to the next page load through localStorage, taking it back if the page is shown again.
// Optional: `@flightrec/sdk` gives it to every client, `@flightrec/sdk/browser` exports it for
// a core client (`new FlightrecClient(opts, { page: pageHandOff })`).
import { batchItems, isDroppable, itemBatches, rebuild, sealItem, type BatchQueue } from './batcher.js';
import type { Lanes } from './lanes.js';
import { pageHandoffPersistence, type HandOffQueue, type PageStorage, type PersistentQueue } from './persistence.js';
import { runtime } from './runtime.js';
import { utf8Length } from './sanitize.js';
import { HOLD_RENEW_MS, type Store } from './store.js';
import { KEEPALIVE_MAX_BYTES, type Transport } from './transport.js';
import type { FlightrecError } from './types.js';

/** What the hand-off needs of its client. */
export interface PageHost {
  readonly queue: BatchQueue;
  readonly lanes: Lanes;
  readonly store: Store;
  readonly transport: Transport;
  /** Recording on. */
  on(): boolean;
  /** Not shut down. */
  open(): boolean;
  report(e: FlightrecError): void;
}

/** The client's side of the hand-off (see PageHandOff). */
export interface PageLink {
  /** The page is hidden, or left (`exit`): the session's buffer is sealed already. */
  leave(exit: boolean): void;
  /** The page is shown again: what was handed over is taken back. */
  back(): void;
  /** A batch arrived or was refused for good: it leaves the hand-off. */
  released(id: string): void;
  /** Timer tick: a hidden page renews the hold on what it handed over. */
  tick(now: number): void;
  /** Consent withdrawn: what this page handed over is taken back; false if there was no hand-off to clear. */
  forget(): boolean;
}

/** Given to a client as `{ page: pageHandOff }`. */
export interface PageHandOff {
  /** The browser's default persistence (localStorage, per endpoint and key), undefined elsewhere. */
  persistence(opts: { endpoint: string; apiKey: string; lifecycle?: boolean }): PersistentQueue | undefined;
  attach(host: PageHost): PageLink;
}

export const pageHandOff: PageHandOff = {
  persistence: defaultPersistence,
  attach: (host) => new HandOff(host),
};

class HandOff implements PageLink {
  /** Ids of what this page's last hand-off left. */
  private handedOff: ReadonlySet<string> = new Set();
  private handedOffAt = 0;
  /** The last hand-off was held for this page (a hidden page), not left to anyone (pagehide). */
  private handedOffHeld = false;

  constructor(private readonly host: PageHost) {}

  private get queue(): HandOffQueue | undefined {
    const p = this.host.store.persistence as Partial<HandOffQueue>;
    return typeof p.handOff === 'function' && typeof p.reclaim === 'function' ? (p as HandOffQueue) : undefined;
  }

  leave(exit: boolean): void {
    this.host.lanes.paused = false;
    this.drain(exit);
    this.handOff(exit);
  }

  /**
   * Sends the queue with keepalive, now (synchronously), as far as the browser's budget goes:
   * session ends and crashes first (small, and an end left unsent leaves its session active),
   * then the data in order, a batch split to fill what is left; the service takes events of a
   * session after its end. A session whose start is not acknowledged yet sends its start alone:
   * its events would race it and be refused (404), so they wait for the next page load. On
   * exit, a batch already in flight without keepalive is sent again with it (leaving the page
   * cancels ordinary requests; the service collapses a repeat).
   */
  private drain(exit: boolean): void {
    const { queue, lanes, store, transport } = this.host;
    if (!store.loaded || !this.host.open() || !this.host.on()) return;
    let budget = KEEPALIVE_MAX_BYTES - transport.keepaliveInFlight;
    const unacknowledged = new Set(
      queue
        .list()
        .filter((b) => b.kind === 'session')
        .map((b) => b.sessionId),
    );
    const candidates = (data: boolean) =>
      queue
        .list()
        .filter(
          (b) =>
            isDroppable(b) === data &&
            !lanes.keptAlive.has(b.id) &&
            (exit || !queue.inFlight.has(b.id)) &&
            (!unacknowledged.has(b.sessionId) || b.kind === 'session'),
        );
    for (const b of candidates(false)) {
      const size = utf8Length(b.body);
      if (size > budget) continue;
      budget -= size;
      lanes.launch(b, true, true);
    }
    for (const b of candidates(true)) {
      if (budget < 256) break;
      let next = b;
      let size = utf8Length(b.body);
      if (size > budget) {
        const items = batchItems(b);
        const [first] = itemBatches(
          b.kind as 'events' | 'network',
          b.sessionId,
          items.map(sealItem),
          Number.MAX_SAFE_INTEGER,
          budget,
          b.createdAt,
        );
        if (!first || first.items >= items.length || utf8Length(first.body) > budget) continue;
        queue.replace(b.id, [first, ...rebuild(b, items.slice(first.items))]);
        next = first;
        size = utf8Length(first.body);
      }
      budget -= size;
      lanes.launch(next, true, true);
    }
  }

  /**
   * Leaves what is not known to have arrived to the next page load, in place of this page's
   * earlier hand-off. A hidden page holds it (another tab leaves it alone while this one
   * lives); a page being left (`exit`) holds nothing.
   */
  private handOff(exit: boolean): void {
    const { store } = this.host;
    if (!store.loaded || !this.host.on()) return;
    const left = store.snapshot(exit ? undefined : store.hold());
    const replacing = this.handedOff;
    this.handedOff = new Set(left.map((b) => b.id));
    this.handedOffAt = Date.now();
    this.handedOffHeld = !exit;
    try {
      const q = this.queue;
      if (q) q.handOff(left, replacing);
      else
        void store.persistence
          .save(left)
          .catch((err: unknown) =>
            this.host.report({ kind: 'persistence', message: 'could not save the queue', cause: err }),
          );
    } catch (err) {
      this.host.report({ kind: 'persistence', message: 'could not hand the queue over', cause: err });
    }
  }

  back(): void {
    const q = this.queue;
    if (!q) return;
    try {
      // What was handed over, the provisional end of the open session included.
      q.reclaim(this.handedOff);
      this.handedOff = new Set();
      this.handedOffHeld = false;
    } catch {
      // the next page load sends them too; the service collapses the repeat
    }
  }

  released(id: string): void {
    if (!this.handedOff.has(id)) return;
    const left = new Set(this.handedOff);
    left.delete(id);
    this.handedOff = left;
    try {
      this.queue?.reclaim(new Set([id]));
    } catch {
      // still handed over: the next page load sends it again and the service collapses it
    }
  }

  tick(now: number): void {
    if (this.handedOffHeld && this.handedOff.size > 0 && now - this.handedOffAt >= HOLD_RENEW_MS) this.handOff(false);
  }

  forget(): boolean {
    const q = this.queue;
    try {
      if (q) q.handOff([], this.handedOff);
    } catch {
      // storage refused: nothing of ours was written there either
    }
    this.handedOff = new Set();
    this.handedOffHeld = false;
    return q !== undefined;
  }
}

/**
 * In a browser, what a page could not send when it was left goes to the next page load through
 * `localStorage`, under a key per endpoint and API key (a hash: the key itself is not written).
 * Undefined elsewhere, or where storage is refused (privacy modes, sandboxed frames).
 */
function defaultPersistence(opts: { endpoint: string; apiKey: string; lifecycle?: boolean }) {
  if (opts.lifecycle === false || runtime() !== 'browser') return undefined;
  try {
    const storage = (globalThis as { localStorage?: PageStorage }).localStorage;
    if (!storage || typeof storage.removeItem !== 'function') return undefined;
    return pageHandoffPersistence(storage, `flightrec.unsent.${fnv1a(`${opts.endpoint} ${opts.apiKey}`)}`);
  } catch {
    return undefined;
  }
}

function fnv1a(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}
