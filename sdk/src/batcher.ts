// Sealing tracked items into contract-sized request bodies, and the bounded queue of sealed
// batches waiting to be sent. No timers and no I/O here: the client decides when to seal/send.
import { utf8Length } from './sanitize.js';
import type { Batch, BatchKind, CrashReport, Device, NetworkRequest, SdkEvent } from './types.js';
import { uuidv4 } from './uuid.js';

/** The contract's per-request limits. */
export const MAX_EVENTS_PER_BATCH = 500;
export const MAX_REQUESTS_PER_BATCH = 200;
/** The contract's recommended cadence. */
export const EVENTS_FLUSH_INTERVAL_MS = 5_000;
export const NETWORK_FLUSH_INTERVAL_MS = 30_000;
/**
 * Bytes of JSON per request body. The service refuses bodies over 5 MiB (after inflating gzip)
 * with 413; 1 MiB stays far from that, and a retry of a 1 MiB body on a mobile link is bearable.
 */
// A literal, not 1024 * 1024: a bundler keeps a product at the top level as if it had side effects.
export const MAX_BATCH_BYTES = 1_048_576;

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

export function sessionStartBatch(
  s: { sessionId: string; device: Device; startedAt: number; userId?: string },
  now = Date.now(),
): Batch {
  const payload =
    s.userId === undefined
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

/** One serialised event or network request, with its UTF-8 size. */
export interface SealedItem {
  json: string;
  bytes: number;
}

export function sealItem(item: object): SealedItem {
  const json = JSON.stringify(item);
  return { json, bytes: utf8Length(json) };
}

/**
 * Bodies of `{"sessionId":…,"events":[…]}` (or `requests`) holding at most `maxItems` items and,
 * where more than one item fits, at most `maxBytes` bytes; in order. The items are already JSON,
 * so a body is the same bytes `JSON.stringify` would make of the whole.
 */
export function itemBatches(
  kind: 'events' | 'network',
  sessionId: string,
  items: readonly SealedItem[],
  maxItems: number,
  maxBytes = MAX_BATCH_BYTES,
  now = Date.now(),
): Batch[] {
  const head = `{"sessionId":${JSON.stringify(sessionId)},"${kind === 'events' ? 'events' : 'requests'}":[`;
  const overhead = utf8Length(head) + 2;
  const out: Batch[] = [];
  let cur: string[] = [];
  let bytes = overhead;
  const close = () => {
    if (!cur.length) return;
    out.push({
      id: uuidv4(),
      kind,
      path: PATHS[kind],
      sessionId,
      items: cur.length,
      body: `${head + cur.join(',')}]}`,
      createdAt: now,
    });
    cur = [];
    bytes = overhead;
  };
  for (const it of items) {
    if (cur.length && (cur.length >= maxItems || bytes + 1 + it.bytes > maxBytes)) close();
    cur.push(it.json);
    bytes += it.bytes + (cur.length > 1 ? 1 : 0);
  }
  close();
  return out;
}

/** One batch per at most `max` events (all of one session, as /ingest/events requires) and `maxBytes`. */
export function eventBatches(
  sessionId: string,
  events: readonly SdkEvent[],
  max = MAX_EVENTS_PER_BATCH,
  now = Date.now(),
  maxBytes = MAX_BATCH_BYTES,
): Batch[] {
  return itemBatches('events', sessionId, events.map(sealItem), Math.min(max, MAX_EVENTS_PER_BATCH), maxBytes, now);
}

export function networkBatches(
  sessionId: string,
  requests: readonly NetworkRequest[],
  max = MAX_REQUESTS_PER_BATCH,
  now = Date.now(),
  maxBytes = MAX_BATCH_BYTES,
): Batch[] {
  return itemBatches(
    'network',
    sessionId,
    requests.map(sealItem),
    Math.min(max, MAX_REQUESTS_PER_BATCH),
    maxBytes,
    now,
  );
}

/** The items of a data batch, parsed back from its body. */
export function batchItems(b: Batch): object[] {
  const j = JSON.parse(b.body) as { events?: object[]; requests?: object[] };
  return j.events ?? j.requests ?? [];
}

/**
 * A data batch of `b`'s session and kind holding `items` (some of `b`'s): for a 413 (halves) and a
 * 422 (without the items the service named). Empty when no items are left.
 */
export function rebuild(b: Batch, items: readonly object[], now = b.createdAt): Batch[] {
  if (b.kind !== 'events' && b.kind !== 'network') return [];
  return itemBatches(b.kind, b.sessionId, items.map(sealItem), Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, now);
}

/** Splits a data batch of two or more items into two halves, in order. */
export function halve(b: Batch): Batch[] {
  const items = batchItems(b);
  if (items.length < 2) return [b];
  const mid = Math.ceil(items.length / 2);
  return [...rebuild(b, items.slice(0, mid)), ...rebuild(b, items.slice(mid))];
}

/** Only data batches are dropped on overflow: losing a session start would orphan its events
 *  (404), losing an end leaves the session active forever, and crashes are the most valuable. */
export function isDroppable(b: Batch): boolean {
  return b.kind === 'events' || b.kind === 'network';
}

/**
 * FIFO of sealed batches, bounded by the number of items (events + requests) they carry. When a
 * push goes over the bound, data batches are dropped (never one in flight, never a session
 * start/end or a crash) and counted in `dropped` (items): the oldest while the service is
 * failing (the recent past is worth more than what could not be sent for minutes), the newest
 * while it is healthy (`dropNewest`): a burst faster than the network must not lose the start of
 * the session it is part of.
 */
export class BatchQueue {
  private batches: Batch[] = [];
  private itemTotal = 0;
  /** Items dropped on overflow since the queue was made. */
  dropped = 0;
  /** Batches being sent; never dropped. */
  readonly inFlight = new Set<string>();

  constructor(private readonly opts: { maxItems: number; onDrop?: (b: Batch) => void; dropNewest?: () => boolean }) {}

  get length(): number {
    return this.batches.length;
  }

  get items(): number {
    return this.itemTotal;
  }

  peek(): Batch | undefined {
    return this.batches[0];
  }

  /** The batches in order, not copied: read it before the next change. */
  list(): readonly Batch[] {
    return this.batches;
  }

  /** The oldest batch of each session, in queue order: what may be sent next without reordering a session. */
  heads(): Batch[] {
    const seen = new Set<string>();
    const out: Batch[] = [];
    for (const b of this.batches) {
      if (seen.has(b.sessionId)) continue;
      seen.add(b.sessionId);
      out.push(b);
    }
    return out;
  }

  /** Puts `parts` where batch `id` was (a split keeps its place in its session's order). */
  replace(id: string, parts: readonly Batch[]): void {
    const i = this.batches.findIndex((b) => b.id === id);
    if (i < 0) return;
    const [old] = this.batches.splice(i, 1, ...parts);
    this.itemTotal += parts.reduce((n, b) => n + b.items, 0) - (old?.items ?? 0);
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
    if (b) this.itemTotal -= b.items;
    return b;
  }

  snapshot(): Batch[] {
    return this.batches.slice();
  }

  private enforceBound(): void {
    if (this.itemTotal <= this.opts.maxItems) return;
    const newest = this.opts.dropNewest?.() === true;
    let i = newest ? this.batches.length - 1 : 0;
    while (this.itemTotal > this.opts.maxItems && i >= 0 && i < this.batches.length) {
      const b = this.batches[i];
      if (!b) break;
      if (!isDroppable(b) || this.inFlight.has(b.id)) {
        i += newest ? -1 : 1;
        continue;
      }
      this.batches.splice(i, 1);
      this.itemTotal -= b.items;
      this.dropped += b.items;
      this.opts.onDrop?.(b);
      if (newest) i--;
    }
  }
}
