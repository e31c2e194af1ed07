// Sealing tracked items into contract-sized request bodies, and the bounded queue of sealed
// batches waiting to be sent. No timers and no I/O here: the client decides when to seal/send.
import type { Batch, BatchKind, CrashReport, Device, NetworkRequest, SdkEvent } from './types.ts';
import { uuidv4 } from './uuid.ts';

/** The contract's per-request limits. */
export const MAX_EVENTS_PER_BATCH = 500;
export const MAX_REQUESTS_PER_BATCH = 200;
/** The contract's recommended cadence. */
export const EVENTS_FLUSH_INTERVAL_MS = 5_000;
export const NETWORK_FLUSH_INTERVAL_MS = 30_000;

export const PATHS: Record<BatchKind, string> = {
  session: '/ingest/session',
  events: '/ingest/events',
  network: '/ingest/network',
  crash: '/ingest/crash',
  sessionEnd: '/ingest/session/end',
};

/** Splits `items` into consecutive chunks of at most `max`. */
export function chunk<T>(items: readonly T[], max: number): T[][] {
  if (!(max >= 1)) throw new RangeError('chunk size must be at least 1');
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += max) out.push(items.slice(i, i + max));
  return out;
}

function batch(kind: BatchKind, sessionId: string, items: number, payload: object, now: number): Batch {
  return { id: uuidv4(), kind, path: PATHS[kind], sessionId, items, body: JSON.stringify(payload), createdAt: now };
}

export function sessionStartBatch(s: { sessionId: string; device: Device; startedAt: number; userId?: string }, now = Date.now()): Batch {
  const payload = s.userId === undefined
    ? { sessionId: s.sessionId, device: s.device, startedAt: s.startedAt }
    : { sessionId: s.sessionId, device: s.device, startedAt: s.startedAt, userId: s.userId };
  return batch('session', s.sessionId, 0, payload, now);
}

export function sessionEndBatch(sessionId: string, endedAt: number, now = Date.now()): Batch {
  return batch('sessionEnd', sessionId, 0, { sessionId, endedAt }, now);
}

export function crashBatch(c: CrashReport, now = Date.now()): Batch {
  return batch('crash', c.sessionId, 0, c, now);
}

/** One batch per at most `max` events (all of one session, as /ingest/events requires). */
export function eventBatches(sessionId: string, events: readonly SdkEvent[], max = MAX_EVENTS_PER_BATCH, now = Date.now()): Batch[] {
  return chunk(events, Math.min(max, MAX_EVENTS_PER_BATCH)).map((c) => batch('events', sessionId, c.length, { sessionId, events: c }, now));
}

export function networkBatches(sessionId: string, requests: readonly NetworkRequest[], max = MAX_REQUESTS_PER_BATCH, now = Date.now()): Batch[] {
  return chunk(requests, Math.min(max, MAX_REQUESTS_PER_BATCH)).map((c) => batch('network', sessionId, c.length, { sessionId, requests: c }, now));
}

/** Only data batches are dropped on overflow: losing a session start would orphan its events
 *  (404), losing an end leaves the session active forever, and crashes are the most valuable. */
export function isDroppable(b: Batch): boolean {
  return b.kind === 'events' || b.kind === 'network';
}

/**
 * FIFO of sealed batches, bounded by the number of items (events + requests) they carry. When a
 * push goes over the bound, the oldest data batches are dropped (never the one in flight) and
 * counted in `dropped` (items).
 */
export class BatchQueue {
  private batches: Batch[] = [];
  private itemTotal = 0;
  /** Items dropped on overflow since the queue was made. */
  dropped = 0;
  /** The batch being sent; never dropped. */
  inFlight: string | undefined;

  constructor(private readonly opts: { maxItems: number; onDrop?: (b: Batch) => void }) {}

  get length(): number {
    return this.batches.length;
  }

  get items(): number {
    return this.itemTotal;
  }

  peek(): Batch | undefined {
    return this.batches[0];
  }

  push(...bs: Batch[]): void {
    for (const b of bs) {
      this.batches.push(b);
      this.itemTotal += b.items;
    }
    this.enforceBound();
  }

  /** Puts batches from an earlier run ahead of this run's: they are older. */
  prepend(bs: readonly Batch[]): void {
    this.batches.unshift(...bs);
    this.itemTotal += bs.reduce((n, b) => n + b.items, 0);
    this.enforceBound();
  }

  remove(id: string): Batch | undefined {
    const i = this.batches.findIndex((b) => b.id === id);
    if (i < 0) return undefined;
    const [b] = this.batches.splice(i, 1);
    this.itemTotal -= b!.items;
    return b;
  }

  snapshot(): Batch[] {
    return this.batches.slice();
  }

  private enforceBound(): void {
    let i = 0;
    while (this.itemTotal > this.opts.maxItems && i < this.batches.length) {
      const b = this.batches[i]!;
      if (!isDroppable(b) || b.id === this.inFlight) {
        i++;
        continue;
      }
      this.batches.splice(i, 1);
      this.itemTotal -= b.items;
      this.dropped += b.items;
      this.opts.onDrop?.(b);
    }
  }
}
