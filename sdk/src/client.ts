import {
  BatchQueue, EVENTS_FLUSH_INTERVAL_MS, MAX_EVENTS_PER_BATCH, MAX_REQUESTS_PER_BATCH, NETWORK_FLUSH_INTERVAL_MS,
  crashBatch, eventBatches, networkBatches, sessionEndBatch, sessionStartBatch,
} from './batcher.ts';
import { instrumentFetch, type AnyFetch, type RecordedRequest } from './fetch.ts';
import { memoryPersistence, type PersistentQueue } from './persistence.ts';
import { Transport, type FetchLike, type RetryInfo } from './transport.ts';
import type { Batch, Device, FlightrecError, NetworkRequest, SdkEvent } from './types.ts';
import { uuidv4 } from './uuid.ts';
import { SDK_VERSION } from './version.ts';

export interface FlightrecOptions {
  /** The project's API key (`frk_…`). */
  apiKey: string;
  /** Base URL of the flightrec service. */
  endpoint: string;
  /** Sent with every session start; `sdkVersion` is filled in when absent. */
  device: Device;
  /** The fetch the SDK sends with (default: the platform's). */
  fetch?: FetchLike;
  /** Keeps unsent batches across restarts (default: in memory only). */
  persistence?: PersistentQueue;
  /** Told about rejected, dropped and undeliverable batches; never thrown at the app. */
  onError?: (e: FlightrecError) => void;
  onRetry?: (info: RetryInfo) => void;
  /** Default 5000 (the contract's). */
  flushIntervalMs?: number;
  /** Default 30000 (the contract's). */
  networkFlushIntervalMs?: number;
  /** At most 500 (the contract's limit). */
  maxEventsPerBatch?: number;
  /** At most 200 (the contract's limit). */
  maxRequestsPerBatch?: number;
  /** Bound of the queue of unsent batches, in events + requests; default 10000. */
  maxQueueItems?: number;
  /** Default [2000, 4000, 8000] (the contract's). */
  retryDelaysMs?: readonly number[];
  /** Per-attempt timeout, default 30000; 0 disables it. */
  timeoutMs?: number;
}

export interface CrashOptions {
  /** The app is going down. Default false. */
  isFatal?: boolean;
  /** Caught by the app's own error handling. Default true. */
  handled?: boolean;
}

export interface ClientStats {
  queuedBatches: number;
  queuedItems: number;
  /** Events + requests dropped because the queue was full (oldest first). */
  dropped: number;
  /** Events + requests in batches the service refused with a non-retryable status. */
  rejected: number;
  sentBatches: number;
}

interface OpenSession {
  id: string;
  seq: number;
  route: string | null;
  events: SdkEvent[];
  requests: NetworkRequest[];
}

type Timer = ReturnType<typeof setInterval>;

/**
 * One app's connection to flightrec. Tracked events are buffered per session and sealed into
 * batches every `flushIntervalMs` (network requests every `networkFlushIntervalMs` and at session
 * end); sealed batches go out one at a time, in order, so a session's start is acknowledged
 * before its events are sent.
 */
export class FlightrecClient {
  readonly transport: Transport;
  private readonly device: Device;
  private readonly queue: BatchQueue;
  private readonly persistence: PersistentQueue;
  private readonly maxEvents: number;
  private readonly maxRequests: number;
  private readonly flushIntervalMs: number;
  private readonly abort = new AbortController();
  private readonly timers: Timer[] = [];
  private readonly ready: Promise<void>;
  private loaded = false;
  private session: OpenSession | undefined;
  private sending: Promise<void> | undefined;
  /** Set when a batch ran out of retries: sending waits for the next flush trigger. */
  private paused = false;
  /** Consecutive retry cycles that ran out, and when timer ticks may resume after the last. */
  private outages = 0;
  private resumeAt = 0;
  private closed = false;
  private persistDirty = false;
  private persisting: Promise<void> | undefined;
  private rejected = 0;
  private sentBatches = 0;

  constructor(private readonly opts: FlightrecOptions) {
    if (!opts.apiKey) throw new Error('flightrec: apiKey is required');
    if (!opts.endpoint) throw new Error('flightrec: endpoint is required');
    this.transport = new Transport({
      endpoint: opts.endpoint, apiKey: opts.apiKey, fetch: opts.fetch,
      retryDelaysMs: opts.retryDelaysMs, timeoutMs: opts.timeoutMs, onRetry: opts.onRetry,
    });
    this.device = { sdkVersion: SDK_VERSION, ...opts.device };
    this.flushIntervalMs = opts.flushIntervalMs ?? EVENTS_FLUSH_INTERVAL_MS;
    this.maxEvents = clamp(opts.maxEventsPerBatch ?? MAX_EVENTS_PER_BATCH, 1, MAX_EVENTS_PER_BATCH);
    this.maxRequests = clamp(opts.maxRequestsPerBatch ?? MAX_REQUESTS_PER_BATCH, 1, MAX_REQUESTS_PER_BATCH);
    this.queue = new BatchQueue({
      maxItems: opts.maxQueueItems ?? 10_000,
      onDrop: (batch) => this.report({ kind: 'dropped', message: `queue full: dropped ${batch.items} ${batch.kind}`, batch }),
    });
    this.persistence = opts.persistence ?? memoryPersistence();
    this.ready = this.load();
    this.timers.push(
      every(this.flushIntervalMs, () => {
        this.sealEvents();
        void this.send(Date.now() >= this.resumeAt);
      }),
      every(opts.networkFlushIntervalMs ?? NETWORK_FLUSH_INTERVAL_MS, () => {
        this.sealRequests();
        void this.send(Date.now() >= this.resumeAt);
      }),
    );
  }

  get sessionId(): string | undefined {
    return this.session?.id;
  }

  get dropped(): number {
    return this.queue.dropped;
  }

  stats(): ClientStats {
    return {
      queuedBatches: this.queue.length,
      queuedItems: this.queue.items,
      dropped: this.queue.dropped,
      rejected: this.rejected,
      sentBatches: this.sentBatches,
    };
  }

  /** Starts a session (ending the current one, if any) and returns its id. */
  startSession(opts: { userId?: string } = {}): string {
    if (this.refuseClosed('startSession')) return '';
    if (this.session) void this.endSession();
    const id = uuidv4();
    this.session = { id, seq: 0, route: null, events: [], requests: [] };
    this.enqueue(sessionStartBatch({ sessionId: id, device: this.device, startedAt: Date.now(), userId: opts.userId }));
    void this.send(false);
    return id;
  }

  /** `from` defaults to the previous navigation's `to` in this session (null on the first). */
  trackNavigate(to: string, from?: string | null): number | undefined {
    const s = this.session;
    const seq = this.track({ type: 'navigate', from: from !== undefined ? from : (s?.route ?? null), to });
    if (s && seq !== undefined) s.route = to;
    return seq;
  }

  trackTap(tap: { x: number; y: number; target?: string }): number | undefined {
    return this.track({ type: 'tap', x: tap.x, y: tap.y, ...(tap.target === undefined ? {} : { target: tap.target }) });
  }

  trackCustom(name: string, properties: Record<string, unknown> = {}): number | undefined {
    return this.track({ type: 'custom', name, properties });
  }

  /** A network call as a session event (the service also files it under network logs). */
  trackNetwork(r: { method: string; url: string; statusCode?: number; duration: number; error?: string | null; timestamp?: number }): number | undefined {
    return this.track({
      type: 'network', method: r.method, url: r.url, duration: Math.max(0, Math.round(r.duration)), error: r.error ?? null,
      ...(r.statusCode === undefined ? {} : { statusCode: r.statusCode }),
    }, r.timestamp);
  }

  /**
   * Reports an error as a crash of the current session: its message and stack trace. Buffered
   * events are sealed first, so they reach the service before the crash. The promise settles when
   * the queue has been sent (or could not be); await it in a fatal handler before exiting.
   */
  reportCrash(error: unknown, opts: CrashOptions = {}): Promise<void> {
    const s = this.session;
    if (!s) {
      this.report({ kind: 'usage', message: 'reportCrash called without a session' });
      return Promise.resolve();
    }
    if (this.refuseClosed('reportCrash')) return Promise.resolve();
    this.sealEvents();
    // A fatal crash is the app going down: its buffered requests would be lost with it.
    if (opts.isFatal) this.sealRequests();
    const { message, stackTrace } = describeError(error);
    this.enqueue(crashBatch({
      sessionId: s.id, message, stackTrace,
      isFatal: opts.isFatal ?? false, handled: opts.handled ?? true, timestamp: Date.now(),
    }));
    return this.send(true);
  }

  /** Ends the current session: its buffered events and requests are sealed, then the end. */
  endSession(): Promise<void> {
    const s = this.session;
    if (!s) return Promise.resolve();
    this.sealEvents();
    this.sealRequests();
    this.session = undefined;
    this.enqueue(sessionEndBatch(s.id, Date.now()));
    return this.send(true);
  }

  /** Seals everything buffered and sends the queue; settles when it is empty or a batch ran out of retries. */
  flush(): Promise<void> {
    this.sealEvents();
    this.sealRequests();
    return this.send(true);
  }

  /**
   * Ends the session, tries to send everything within `timeoutMs` (default 10 s), then stops:
   * what is still unsent stays in the persistent queue for the next run.
   */
  async shutdown(opts: { timeoutMs?: number } = {}): Promise<void> {
    if (this.closed) return;
    for (const t of this.timers) clearInterval(t);
    void this.endSession();
    const pending = this.send(true);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([pending, new Promise<void>((r) => { timer = setTimeout(r, opts.timeoutMs ?? 10_000); })]);
    clearTimeout(timer);
    this.closed = true;
    this.abort.abort();
    await pending;
    await this.ready;
    this.schedulePersist();
    await this.persisting;
  }

  /** A fetch that records the app's requests of the current session to /ingest/network. */
  wrapFetch<F extends AnyFetch>(fetchImpl?: F): F {
    const base: AnyFetch = fetchImpl ?? ((input, init) => globalThis.fetch(input, init));
    const own = normalizeUrl(this.transport.endpoint);
    return instrumentFetch(base, {
      ignore: (url) => {
        const u = normalizeUrl(url);
        return u === own || u.startsWith(own + '/');
      },
      context: () => this.session?.id,
      record: (r, sessionId) => this.recordRequest(r, sessionId as string | undefined),
    }) as F;
  }

  /** Records a request made outside fetch (XHR, native modules); sent to /ingest/network. */
  recordRequest(r: RecordedRequest, sessionId = this.session?.id): void {
    if (!sessionId || this.closed) return;
    const req: NetworkRequest = { id: uuidv4(), ...r, duration: Math.max(0, Math.round(r.duration)) };
    const s = this.session;
    if (s?.id !== sessionId) {
      // Finished after its session ended: that session's buffer is already sealed.
      this.enqueue(...networkBatches(sessionId, [req], this.maxRequests));
      return;
    }
    s.requests.push(req);
    if (s.requests.length >= this.maxRequests) {
      this.sealRequests();
      void this.send(false);
    }
  }

  private track(e: Record<string, unknown> & { type: SdkEvent['type'] }, timestamp?: number): number | undefined {
    const s = this.session;
    if (!s) {
      this.report({ kind: 'usage', message: `track ${e.type} called without a session` });
      return undefined;
    }
    const seq = s.seq++;
    s.events.push({ ...e, sessionId: s.id, timestamp: timestamp ?? Date.now(), sequenceNumber: seq } as SdkEvent);
    if (s.events.length >= this.maxEvents) {
      // A full batch goes now rather than growing the buffer until the next tick.
      this.sealEvents();
      void this.send(false);
    }
    return seq;
  }

  private sealEvents(): void {
    const s = this.session;
    if (!s || s.events.length === 0) return;
    this.enqueue(...eventBatches(s.id, s.events, this.maxEvents));
    s.events = [];
  }

  private sealRequests(): void {
    const s = this.session;
    if (!s || s.requests.length === 0) return;
    this.enqueue(...networkBatches(s.id, s.requests, this.maxRequests));
    s.requests = [];
  }

  private enqueue(...batches: Batch[]): void {
    this.queue.push(...batches);
    this.schedulePersist();
  }

  /**
   * Sends queued batches in order, one at a time. `resume` (a flush trigger) lifts the pause that
   * follows a batch running out of retries; new full batches do not.
   */
  private send(resume: boolean): Promise<void> {
    if (resume) this.paused = false;
    if (this.sending) return this.sending;
    if (this.paused || this.closed) return Promise.resolve();
    this.sending = this.pump();
    return this.sending;
  }

  private async pump(): Promise<void> {
    try {
      await this.ready;
      for (;;) {
        const b = this.queue.peek();
        if (!b || this.paused || this.closed) break;
        this.queue.inFlight = b.id;
        const r = await this.transport.send(b.path, b.body, this.abort.signal);
        this.queue.inFlight = undefined;
        if (r.outcome === 'aborted') break;
        if (r.outcome !== 'failed') this.outages = 0;
        if (r.outcome === 'sent') {
          this.sentBatches++;
          this.queue.remove(b.id);
        } else if (r.outcome === 'rejected') {
          this.rejected += b.items;
          this.queue.remove(b.id);
          this.report({ kind: 'rejected', status: r.status, message: r.error, batch: b });
        } else {
          this.paused = true;
          this.outages++;
          this.resumeAt = Date.now() + outageBackoff(this.outages, this.flushIntervalMs);
          this.report({ kind: 'retry-exhausted', status: r.status, message: r.error, batch: b });
        }
        this.schedulePersist();
      }
    } finally {
      // Cleared in the same turn as the loop's last check, so a batch queued after it starts a new pump.
      this.sending = undefined;
    }
  }

  private async load(): Promise<void> {
    try {
      const stored = await this.persistence.load();
      this.queue.prepend(stored);
    } catch (err) {
      this.report({ kind: 'persistence', message: 'could not load the persisted queue', cause: err });
    }
    this.loaded = true;
    if (this.queue.length) this.schedulePersist();
  }

  private schedulePersist(): void {
    // Saving before the stored batches are loaded would overwrite them.
    if (!this.loaded) return;
    this.persistDirty = true;
    this.persisting ??= (async () => {
      try {
        while (this.persistDirty) {
          this.persistDirty = false;
          await this.persistence.save(this.queue.snapshot());
        }
      } catch (err) {
        this.report({ kind: 'persistence', message: 'could not save the queue', cause: err });
      } finally {
        this.persisting = undefined;
      }
    })();
  }

  private refuseClosed(call: string): boolean {
    if (!this.closed) return false;
    this.report({ kind: 'usage', message: `${call} called after shutdown` });
    return true;
  }

  private report(e: FlightrecError): void {
    try {
      this.opts.onError?.(e);
    } catch {
      // the app's hook must not break delivery
    }
  }
}

/**
 * How long timer ticks leave the queue alone after the nth retry cycle in a row ran out: the
 * next tick after the first, then doubling from the flush interval up to the contract's 60 s
 * cap, so a long outage is not met with four requests every few seconds. An explicit flush,
 * session end, crash report or shutdown always tries at once.
 */
export function outageBackoff(n: number, flushIntervalMs: number): number {
  return n <= 1 ? 0 : Math.min(60_000, flushIntervalMs * 2 ** (n - 2));
}

/** Lower-cased scheme/host, default port dropped, no trailing slash: how fetch will spell it. */
function normalizeUrl(url: string): string {
  try {
    return new URL(url).href.replace(/\/+$/, '');
  } catch {
    return url.replace(/\/+$/, '');
  }
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, Math.floor(n)));
}

/** A timer that does not keep a Node process alive. */
function every(ms: number, fn: () => void): Timer {
  const t = setInterval(fn, ms);
  (t as { unref?: () => void }).unref?.();
  return t;
}

export function describeError(error: unknown): { message: string; stackTrace: string } {
  if (error instanceof Error) {
    const head = error.name && error.name !== 'Error' && !error.message.startsWith(error.name) ? `${error.name}: ` : '';
    const message = head + (error.message || error.name || 'Error');
    return { message, stackTrace: error.stack || message };
  }
  const message = typeof error === 'string' ? error : safeJson(error);
  return { message, stackTrace: message };
}

function safeJson(x: unknown): string {
  try {
    return JSON.stringify(x) ?? String(x);
  } catch {
    return String(x);
  }
}
