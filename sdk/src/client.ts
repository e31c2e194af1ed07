import {
  BatchQueue, EVENTS_FLUSH_INTERVAL_MS, MAX_BATCH_BYTES, MAX_EVENTS_PER_BATCH, MAX_REQUESTS_PER_BATCH, NETWORK_FLUSH_INTERVAL_MS,
  batchItems, crashBatch, halve, itemBatches, rebuild, sealItem, sessionEndBatch, sessionStartBatch, type SealedItem,
} from './batcher.ts';
import { instrumentFetch, instrumentXhr, type AnyFetch, type RecordedRequest } from './fetch.ts';
import { memoryPersistence, type PersistentQueue } from './persistence.ts';
import { detectDevice, installCrashHandlers, watchLifecycle, within, type AppStateLike } from './runtime.ts';
import * as clean from './sanitize.ts';
import { Transport, errorMessage, type FetchLike, type RetryInfo } from './transport.ts';
import type { Batch, CrashReport, Device, FlightrecError, NetworkRequest, Outgoing, SdkEvent } from './types.ts';
import { uuidv4 } from './uuid.ts';
import { SDK_VERSION } from './version.ts';

export interface FlightrecOptions {
  /** The project's API key (`frk_…`; an ingest-only key is the one to ship in an app). */
  apiKey: string;
  /** Base URL of the flightrec service. */
  endpoint: string;
  /** Sent with every session start, over what the runtime tells (`detectDevice`); `sdkVersion` is filled in. */
  device?: Device;
  /** Fill in locale, time zone and, in browsers and Node, platform, OS version and screen. Default true. */
  detectDevice?: boolean;
  /** The fetch the SDK sends with (default: the platform's). */
  fetch?: FetchLike;
  /** Keeps unsent batches and the open session's buffer across restarts (default: in memory only). */
  persistence?: PersistentQueue;
  /** How often a changed buffer is saved: what a hard kill can lose at most. Default 1000. */
  persistIntervalMs?: number;
  /** Told about rejected, dropped, invalid and undeliverable data; never thrown at the app. */
  onError?: (e: FlightrecError) => void;
  onRetry?: (info: RetryInfo) => void;
  /**
   * Sees every event, network request and crash before it is buffered; return it (changed or
   * not) to keep it, null to drop it. A hook that throws drops the item. Identity fields
   * (sessionId, sequenceNumber, id) cannot be changed.
   */
  beforeSend?: (item: Outgoing) => Outgoing | null | undefined;
  /** Share of sessions recorded, 0..1, decided at session start. Default 1. */
  sampleRate?: number;
  /**
   * Query/fragment parameters whose values are replaced by `[Filtered]` in recorded URLs and
   * routes (default `DEFAULT_SCRUBBED_PARAMS`); false keeps URLs as they are.
   */
  scrubQueryParams?: readonly string[] | false;
  /** Report uncaught errors as crashes (see `installCrashHandlers`). Default true. */
  captureCrashes?: boolean;
  /** How long a fatal crash may take to send before the platform's own handling goes on. Default 2000. */
  crashFlushTimeoutMs?: number;
  /** Start a session at once and whenever tracking finds none (after an idle or background end). Default false. */
  autoSession?: boolean;
  /** With `autoSession`: a session with no activity for this long is ended. Default 30 min; 0 disables. */
  idleTimeoutMs?: number;
  /** With `autoSession`: coming back after this long in the background starts a new session. Default 30 s. */
  backgroundTimeoutMs?: number;
  /** Browser: flush on `visibilitychange`/`pagehide` with keepalive. Default true. */
  lifecycle?: boolean;
  /** React Native: pass `AppState` to flush on background and end sessions as above. */
  appState?: AppStateLike;
  /** Gzip request bodies where the runtime can (CompressionStream or node:zlib). Default true. */
  compress?: boolean;
  /** Default 5000 (the contract's). */
  flushIntervalMs?: number;
  /** Default 30000 (the contract's). */
  networkFlushIntervalMs?: number;
  /** At most 500 (the contract's limit). */
  maxEventsPerBatch?: number;
  /** At most 200 (the contract's limit). */
  maxRequestsPerBatch?: number;
  /** Bytes of JSON per request, default 1 MiB (the service refuses 5 MiB). */
  maxBatchBytes?: number;
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
  /** Events, requests and crashes left out at track time as invalid (or by a throwing beforeSend). */
  invalid: number;
  sentBatches: number;
}

interface OpenSession {
  id: string;
  seq: number;
  route: string | null;
  events: SealedItem[];
  eventBytes: number;
  requests: SealedItem[];
  requestBytes: number;
  startedAt: number;
  lastActivity: number;
}

type Timer = ReturnType<typeof setInterval>;

/** Batches of different sessions in flight at once, so one throttled session does not stall the rest. */
const MAX_LANES = 3;
/** Room for the batch envelope when checking that one item fits in a batch. */
const ENVELOPE_BYTES = 128;

/**
 * One app's connection to flightrec. Tracked values are checked and serialised when tracked, then
 * buffered per session and sealed into batches every `flushIntervalMs` (network requests every
 * `networkFlushIntervalMs` and at session end), split by count and bytes. Batches of one session
 * go out one at a time, in order, so its start is acknowledged before its events; other
 * sessions' batches go alongside.
 */
export class FlightrecClient {
  readonly transport: Transport;
  private readonly device: Device;
  private readonly queue: BatchQueue;
  private readonly persistence: PersistentQueue;
  private readonly maxEvents: number;
  private readonly maxRequests: number;
  private readonly maxBytes: number;
  private readonly flushIntervalMs: number;
  private readonly scrub: (url: string) => string;
  private readonly abort = new AbortController();
  private readonly timers: Timer[] = [];
  private readonly uninstall: (() => void)[] = [];
  private readonly ready: Promise<void>;
  private readonly unsampled = new Set<string>();
  private loaded = false;
  private session: OpenSession | undefined;
  private lastUserId: string | undefined;
  /** Sessions with a batch in flight (one each). */
  private readonly lanes = new Set<string>();
  private idle: { promise: Promise<void>; resolve: () => void } | undefined;
  /** Set when a batch ran out of retries: sending waits for the next flush trigger. */
  private paused = false;
  /** Consecutive retry cycles that ran out, and when timer ticks may resume after the last. */
  private outages = 0;
  private resumeAt = 0;
  private backgroundAt: number | undefined;
  private keepalive = false;
  private closed = false;
  private closing = false;
  private persistDirty = false;
  private bufferDirty = false;
  private persisting: Promise<void> | undefined;
  private rejected = 0;
  private invalidItems = 0;
  private sentBatches = 0;

  constructor(private readonly opts: FlightrecOptions) {
    if (!opts.apiKey) throw new Error('flightrec: apiKey is required');
    if (!opts.endpoint) throw new Error('flightrec: endpoint is required');
    this.transport = new Transport({
      endpoint: opts.endpoint, apiKey: opts.apiKey, fetch: opts.fetch, compress: opts.compress ?? true,
      retryDelaysMs: opts.retryDelaysMs, timeoutMs: opts.timeoutMs, onRetry: opts.onRetry,
    });
    const issues: clean.Issues = [];
    const given = { ...(opts.detectDevice === false ? {} : detectDevice()), ...opts.device };
    this.device = { sdkVersion: SDK_VERSION, ...clean.device(given, issues) };
    if (issues.length) this.invalid('device: values left out of the session start', issues, false);
    this.scrub = clean.urlScrubber(opts.scrubQueryParams);
    this.flushIntervalMs = opts.flushIntervalMs ?? EVENTS_FLUSH_INTERVAL_MS;
    this.maxEvents = clamp(opts.maxEventsPerBatch ?? MAX_EVENTS_PER_BATCH, 1, MAX_EVENTS_PER_BATCH);
    this.maxRequests = clamp(opts.maxRequestsPerBatch ?? MAX_REQUESTS_PER_BATCH, 1, MAX_REQUESTS_PER_BATCH);
    this.maxBytes = clamp(opts.maxBatchBytes ?? MAX_BATCH_BYTES, 1024, 4 * 1024 * 1024);
    this.queue = new BatchQueue({
      maxItems: opts.maxQueueItems ?? 10_000,
      onDrop: (batch) => this.report({ kind: 'dropped', message: `queue full: dropped ${batch.items} ${batch.kind}`, batch }),
    });
    this.persistence = opts.persistence ?? memoryPersistence();
    this.ready = this.load();
    this.timers.push(
      every(this.flushIntervalMs, () => this.guard(undefined, () => {
        this.expireIdle();
        this.sealEvents();
        void this.send(Date.now() >= this.resumeAt);
      })),
      every(opts.networkFlushIntervalMs ?? NETWORK_FLUSH_INTERVAL_MS, () => this.guard(undefined, () => {
        this.sealRequests();
        void this.send(Date.now() >= this.resumeAt);
      })),
      every(opts.persistIntervalMs ?? 1000, () => this.guard(undefined, () => {
        if (this.bufferDirty) this.schedulePersist();
      })),
    );
    if (opts.captureCrashes !== false) {
      this.uninstall.push(installCrashHandlers((e, isFatal) => this.reportCrash(e, { isFatal, handled: false }), opts.crashFlushTimeoutMs ?? 2000));
    }
    if (opts.lifecycle !== false || opts.appState) {
      this.uninstall.push(watchLifecycle({ background: () => this.background(), foreground: () => this.foreground() }, opts.appState));
    }
    if (opts.autoSession) this.startSession();
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
      invalid: this.invalidItems,
      sentBatches: this.sentBatches,
    };
  }

  /** Starts a session (ending the current one, if any) and returns its id. */
  startSession(opts: { userId?: string } = {}): string {
    return this.guard('', () => {
      if (this.refuseClosed('startSession')) return '';
      if (this.session) void this.endCurrent();
      const id = uuidv4();
      const now = Date.now();
      this.lastUserId = opts.userId;
      this.session = { id, seq: 0, route: null, events: [], eventBytes: 0, requests: [], requestBytes: 0, startedAt: now, lastActivity: now };
      const rate = this.opts.sampleRate ?? 1;
      if (!(rate >= 1) && !(Math.random() < rate)) {
        this.unsampled.add(id);
        return id;
      }
      const userId = clean.str(opts.userId, clean.LIMITS.short);
      this.enqueue(sessionStartBatch({ sessionId: id, device: this.device, startedAt: now, ...(userId === undefined ? {} : { userId }) }));
      void this.send(false);
      return id;
    });
  }

  /** `from` defaults to the previous navigation's `to` in this session (null on the first). */
  trackNavigate(to: string, from?: string | null): number | undefined {
    return this.track({ type: 'navigate', to, from });
  }

  trackTap(tap: { x: number; y: number; target?: string }): number | undefined {
    return this.track({ type: 'tap', x: tap?.x, y: tap?.y, target: tap?.target });
  }

  trackCustom(name: string, properties: Record<string, unknown> = {}): number | undefined {
    return this.track({ type: 'custom', name, properties });
  }

  /** A network call as a session event (the service also files it under network logs). */
  trackNetwork(r: { method: string; url: string; statusCode?: number; duration: number; error?: string | null; timestamp?: number }): number | undefined {
    return this.track({ type: 'network', ...r }, r?.timestamp);
  }

  /**
   * Reports an error as a crash of the current session: its message and stack trace. Buffered
   * events are sealed first, so they reach the service before the crash. The promise settles when
   * the queue has been sent (or could not be); it never rejects.
   */
  reportCrash(error: unknown, opts: CrashOptions = {}): Promise<void> {
    return this.guard(Promise.resolve(), () => {
      const s = this.current('reportCrash');
      if (!s || this.unsampled.has(s.id)) return Promise.resolve();
      this.sealEvents();
      // A fatal crash is the app going down: its buffered requests would be lost with it.
      if (opts.isFatal) this.sealRequests();
      const d = describeError(error);
      let c: CrashReport = { sessionId: s.id, ...clean.crash({ ...d, isFatal: opts.isFatal, handled: opts.handled }), timestamp: Date.now() };
      if (this.opts.beforeSend) {
        const out = this.filter({ kind: 'crash', crash: c });
        if (out?.kind !== 'crash') return Promise.resolve();
        c = { sessionId: s.id, ...clean.crash(out.crash as unknown as Record<string, unknown>), timestamp: clean.timestamp(out.crash.timestamp) };
      }
      s.lastActivity = Date.now();
      this.enqueue(crashBatch(c));
      return this.send(true);
    });
  }

  /** Ends the current session: its buffered events and requests are sealed, then the end. */
  endSession(): Promise<void> {
    return this.guard(Promise.resolve(), () => this.endCurrent());
  }

  /** Seals everything buffered and sends the queue; settles when it is empty or a batch ran out of retries. */
  flush(): Promise<void> {
    return this.guard(Promise.resolve(), () => {
      this.sealEvents();
      this.sealRequests();
      return this.send(true);
    });
  }

  /**
   * Ends the session, tries to send everything within `timeoutMs` (default 10 s), then stops:
   * what is still unsent stays in the persistent queue for the next run.
   */
  async shutdown(opts: { timeoutMs?: number } = {}): Promise<void> {
    if (this.closed || this.closing) return;
    this.closing = true;
    try {
      for (const t of this.timers) clearInterval(t);
      for (const u of this.uninstall.splice(0)) u();
      void this.endCurrent();
      const pending = this.send(true);
      await within(pending, opts.timeoutMs ?? 10_000);
      this.closed = true;
      this.abort.abort();
      await pending;
      await this.ready;
      this.schedulePersist();
      await this.persisting;
    } catch (err) {
      this.report({ kind: 'internal', message: `shutdown: ${errorMessage(err)}`, cause: err });
    }
  }

  /**
   * A fetch that records the app's requests of the current session to /ingest/network: every
   * request, the service's own origin included, except the SDK's own `/ingest/*` calls.
   */
  wrapFetch<F extends AnyFetch>(fetchImpl?: F): F {
    const base: AnyFetch = fetchImpl ?? ((input, init) => globalThis.fetch(input, init));
    return instrumentFetch(base, this.instrumentOptions()) as F;
  }

  /**
   * Records the requests made through XMLHttpRequest (`xhr`, default the global one: axios,
   * React Native's fetch). Returns the function that undoes it; `shutdown()` does too.
   */
  instrumentXhr(xhr?: Parameters<typeof instrumentXhr>[1]): () => void {
    return this.guard(() => {}, () => {
      const undo = instrumentXhr(this.instrumentOptions(), xhr);
      this.uninstall.push(undo);
      return undo;
    });
  }

  /** Records a request made outside fetch and XHR (native modules); sent to /ingest/network. */
  recordRequest(r: RecordedRequest, sessionId = this.session?.id): void {
    this.guard(undefined, () => {
      if (!sessionId || this.closed || this.unsampled.has(sessionId)) return;
      const issues: clean.Issues = [];
      let req = clean.networkRequest(r as unknown as Record<string, unknown>, uuidv4(), this.scrub, issues);
      if (req && this.opts.beforeSend) {
        const out = this.filter({ kind: 'request', request: req });
        if (out?.kind !== 'request') return;
        req = clean.networkRequest(out.request as unknown as Record<string, unknown>, req.id, (u) => u, issues);
      }
      const item = req && this.fits(sealItem(req), 'network request', issues);
      if (!item) return void this.invalid('network request dropped', issues, true);
      if (issues.length) this.invalid('network request: values left out', issues, false);
      const s = this.session;
      if (s?.id !== sessionId) {
        // Finished after its session ended: that session's buffer is already sealed.
        this.enqueue(...itemBatches('network', sessionId, [item], this.maxRequests, this.maxBytes));
        return;
      }
      s.requests.push(item);
      s.requestBytes += item.bytes;
      this.bufferDirty = true;
      if (s.requests.length >= this.maxRequests || s.requestBytes >= this.maxBytes) {
        this.sealRequests();
        void this.send(false);
      }
    });
  }

  private instrumentOptions() {
    const own = normalizeUrl(this.transport.endpoint) + '/ingest/';
    return {
      ignore: (url: string) => normalizeUrl(url).startsWith(own),
      context: () => this.session?.id,
      record: (r: RecordedRequest, sessionId: unknown) => this.recordRequest(r, sessionId as string | undefined),
    };
  }

  private track(raw: Record<string, unknown>, ts?: unknown): number | undefined {
    return this.guard(undefined, () => {
      const s = this.current(`track ${String(raw.type)}`);
      if (!s || this.unsampled.has(s.id)) return undefined;
      if (raw.type === 'navigate' && raw.from === undefined) raw = { ...raw, from: s.route };
      const issues: clean.Issues = [];
      const fields = clean.eventFields(raw, this.scrub, issues);
      let ev = fields && ({ ...fields, sessionId: s.id, timestamp: clean.timestamp(ts), sequenceNumber: s.seq } as SdkEvent);
      if (ev && this.opts.beforeSend) {
        const out = this.filter({ kind: 'event', event: ev });
        if (out?.kind !== 'event') return undefined;
        const again = clean.eventFields(out.event as unknown as Record<string, unknown>, (u) => u, issues);
        ev = again && ({ ...again, sessionId: s.id, timestamp: clean.timestamp(out.event.timestamp), sequenceNumber: s.seq } as SdkEvent);
      }
      const item = ev && this.fits(sealItem(ev), `${ev.type} event`, issues);
      if (!ev || !item) return void this.invalid(`${String(raw.type)} event dropped`, issues, true);
      if (issues.length) this.invalid(`${ev.type} event: values left out`, issues, false);
      s.seq++;
      s.lastActivity = Date.now();
      if (ev.type === 'navigate') s.route = raw.to === undefined ? ev.to : String(raw.to);
      s.events.push(item);
      s.eventBytes += item.bytes;
      this.bufferDirty = true;
      if (s.events.length >= this.maxEvents || s.eventBytes >= this.maxBytes) {
        // A full batch goes now rather than growing the buffer until the next tick.
        this.sealEvents();
        void this.send(false);
      }
      return ev.sequenceNumber;
    });
  }

  /** An item larger than a whole batch can never be sent: it is dropped alone. */
  private fits(item: SealedItem, what: string, issues: clean.Issues): SealedItem | undefined {
    if (item.bytes + ENVELOPE_BYTES <= this.maxBytes) return item;
    issues.push(`${what} of ${item.bytes} bytes is over the ${this.maxBytes}-byte batch limit`);
    return undefined;
  }

  private filter(item: Outgoing): Outgoing | null | undefined {
    try {
      return this.opts.beforeSend!(item);
    } catch (err) {
      // A scrubbing hook that fails must not let unscrubbed data through.
      this.invalid(`beforeSend threw (${errorMessage(err)}): ${item.kind} dropped`, [], true);
      return null;
    }
  }

  /** The session to record into: an idle one is ended first, and with autoSession one is started. */
  private current(call: string): OpenSession | undefined {
    if (this.refuseClosed(call)) return undefined;
    this.expireIdle();
    if (!this.session && this.opts.autoSession) this.startSession({ userId: this.lastUserId });
    if (!this.session) this.report({ kind: 'usage', message: `${call} called without a session` });
    return this.session;
  }

  private expireIdle(): void {
    const s = this.session;
    const idle = this.opts.autoSession ? this.opts.idleTimeoutMs ?? 30 * 60_000 : 0;
    if (s && idle > 0 && Date.now() - s.lastActivity >= idle) void this.endCurrent(s.lastActivity);
  }

  private endCurrent(endedAt = Date.now()): Promise<void> {
    const s = this.session;
    if (!s) return Promise.resolve();
    this.sealEvents();
    this.sealRequests();
    this.session = undefined;
    if (!this.unsampled.has(s.id)) this.enqueue(sessionEndBatch(s.id, Math.max(endedAt, s.startedAt)));
    return this.send(true);
  }

  private background(): void {
    this.guard(undefined, () => {
      this.backgroundAt ??= Date.now();
      // The page or app may be gone before the answer: keepalive lets small requests finish.
      this.keepalive = true;
      void this.flush();
      this.schedulePersist();
    });
  }

  private foreground(): void {
    this.guard(undefined, () => {
      this.keepalive = false;
      const at = this.backgroundAt;
      this.backgroundAt = undefined;
      if (!this.opts.autoSession || at === undefined) return;
      if (this.session && Date.now() - at >= (this.opts.backgroundTimeoutMs ?? 30_000)) {
        void this.endCurrent(at);
        this.startSession({ userId: this.lastUserId });
      } else if (!this.session) this.startSession({ userId: this.lastUserId });
    });
  }

  private sealEvents(): void {
    const s = this.session;
    if (!s || s.events.length === 0) return;
    this.enqueue(...itemBatches('events', s.id, s.events, this.maxEvents, this.maxBytes));
    s.events = [];
    s.eventBytes = 0;
  }

  private sealRequests(): void {
    const s = this.session;
    if (!s || s.requests.length === 0) return;
    this.enqueue(...itemBatches('network', s.id, s.requests, this.maxRequests, this.maxBytes));
    s.requests = [];
    s.requestBytes = 0;
  }

  private enqueue(...batches: Batch[]): void {
    this.queue.push(...batches);
    this.schedulePersist();
  }

  /**
   * Starts sending what may be sent; the promise settles when nothing is in flight any more
   * (the queue is empty, or sending paused). `resume` (a flush trigger) lifts the pause that
   * follows a batch running out of retries; new full batches do not.
   */
  private send(resume: boolean): Promise<void> {
    if (resume) this.paused = false;
    if (this.closed) return Promise.resolve();
    if (!this.idle) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => { resolve = r; });
      this.idle = { promise, resolve };
    }
    const { promise } = this.idle;
    void this.ready.then(() => this.dispatch());
    return promise;
  }

  private dispatch(): void {
    if (!this.closed && !this.paused) {
      for (const b of this.queue.heads()) {
        if (this.lanes.size >= MAX_LANES) break;
        if (this.lanes.has(b.sessionId)) continue;
        this.lanes.add(b.sessionId);
        this.queue.inFlight.add(b.id);
        this.deliver(b)
          .catch((err: unknown) => this.report({ kind: 'internal', message: `send: ${errorMessage(err)}`, cause: err }))
          .finally(() => {
            this.lanes.delete(b.sessionId);
            this.queue.inFlight.delete(b.id);
            this.dispatch();
          });
      }
    }
    if (this.lanes.size === 0 && this.idle) {
      const { resolve } = this.idle;
      this.idle = undefined;
      resolve();
    }
  }

  private async deliver(b: Batch): Promise<void> {
    const r = await this.transport.send(b.path, b.body, this.abort.signal, { keepalive: this.keepalive });
    if (r.outcome === 'aborted') return;
    if (r.outcome !== 'failed') this.outages = 0;
    if (r.outcome === 'sent') {
      this.sentBatches++;
      this.queue.remove(b.id);
    } else if (r.outcome === 'rejected') {
      this.rejectedBatch(b, r.status, r.error, r.body);
    } else {
      this.paused = true;
      this.outages++;
      this.resumeAt = Date.now() + outageBackoff(this.outages, this.flushIntervalMs);
      this.report({ kind: 'retry-exhausted', status: r.status, message: r.error, batch: b });
    }
    this.schedulePersist();
  }

  /**
   * A refused batch is dropped, except what can be saved: a 413 is split in halves and sent
   * again; a 422 that names items (`/events/3/x`) loses only those; a session start whose device
   * has a refused field is sent again without it (losing the start would orphan the session).
   */
  private rejectedBatch(b: Batch, status: number, error: string, text: string): void {
    if (status === 413 && b.items > 1) return this.queue.replace(b.id, halve(b));
    if (status === 422) {
      const paths = detailPaths(text);
      if (b.kind === 'events' || b.kind === 'network') {
        const bad = new Set(paths.map((p) => /^\/(?:events|requests)\/(\d+)(?:\/|$)/.exec(p)?.[1]).filter((x) => x !== undefined).map(Number));
        const items = batchItems(b);
        if (bad.size > 0 && bad.size < items.length) {
          const keep = items.filter((_, i) => !bad.has(i));
          const parts = rebuild(b, keep);
          this.rejected += items.length - keep.length;
          this.report({ kind: 'rejected', status, message: `${error} (${items.length - keep.length} of ${items.length} items dropped, the rest sent again)`, batch: b });
          return this.queue.replace(b.id, parts);
        }
      } else if (b.kind === 'session') {
        const fields = paths.map((p) => /^\/device\/(\w+)/.exec(p)?.[1]).filter((x): x is string => x !== undefined);
        const body = JSON.parse(b.body) as { device?: Record<string, unknown> };
        if (fields.length && body.device && fields.every((f) => f in body.device!)) {
          for (const f of fields) delete body.device[f];
          this.report({ kind: 'rejected', status, message: `${error} (session start sent again without device ${fields.join(', ')})`, batch: b });
          return this.queue.replace(b.id, [{ ...b, id: uuidv4(), body: JSON.stringify(body) }]);
        }
      }
    }
    this.rejected += b.items;
    this.queue.remove(b.id);
    this.report({ kind: 'rejected', status, message: error, batch: b });
  }

  private async load(): Promise<void> {
    try {
      const stored = await this.persistence.load();
      this.queue.prepend(stored);
    } catch (err) {
      this.report({ kind: 'persistence', message: 'could not load the persisted queue', cause: err });
    }
    this.loaded = true;
    if (this.queue.length || this.session) this.schedulePersist();
  }

  /**
   * What is saved: the sealed batches, and the open session as it would be sealed now, followed
   * by its end at the last activity. If the process is killed, the next launch sends the
   * buffer and ends the session where it was last seen; while it lives, the next save replaces
   * them. Events repeat nothing on the service if they were also sent: they are identified by
   * session and sequence number, requests by id.
   */
  private snapshot(): Batch[] {
    const out = this.queue.snapshot();
    const s = this.session;
    if (s && !this.unsampled.has(s.id)) {
      out.push(
        ...itemBatches('events', s.id, s.events, this.maxEvents, this.maxBytes),
        ...itemBatches('network', s.id, s.requests, this.maxRequests, this.maxBytes),
        sessionEndBatch(s.id, s.lastActivity),
      );
    }
    return out;
  }

  private schedulePersist(): void {
    // Saving before the stored batches are loaded would overwrite them.
    if (!this.loaded) return;
    this.persistDirty = true;
    this.persisting ??= (async () => {
      try {
        while (this.persistDirty) {
          this.persistDirty = false;
          this.bufferDirty = false;
          await this.persistence.save(this.snapshot());
        }
      } catch (err) {
        this.report({ kind: 'persistence', message: 'could not save the queue', cause: err });
      } finally {
        this.persisting = undefined;
      }
    })();
  }

  private refuseClosed(call: string): boolean {
    if (!this.closed && !this.closing) return false;
    this.report({ kind: 'usage', message: `${call} called after shutdown` });
    return true;
  }

  private invalid(message: string, issues: string[], dropped: boolean): void {
    if (dropped) this.invalidItems++;
    this.report({ kind: 'invalid', message, dropped, issues });
  }

  /** Runs a public entry point so that nothing it does can throw at the app. */
  private guard<T>(fallback: T, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      this.report({ kind: 'internal', message: errorMessage(err), cause: err });
      return fallback;
    }
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

/** The JSON pointers of a 422's details. */
function detailPaths(text: string): string[] {
  try {
    const j = JSON.parse(text) as { details?: { path?: unknown }[] };
    return Array.isArray(j.details) ? j.details.map((d) => d?.path).filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
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
    const head = error.name && error.name !== 'Error' && !String(error.message).startsWith(error.name) ? `${error.name}: ` : '';
    const message = head + (error.message || error.name || 'Error');
    return { message, stackTrace: typeof error.stack === 'string' && error.stack ? error.stack : message };
  }
  const message = typeof error === 'string' ? error : safeJson(error);
  return { message, stackTrace: message };
}

function safeJson(x: unknown): string {
  try {
    return JSON.stringify(clean.jsonSafe(x)) ?? String(x);
  } catch {
    return 'non-serialisable value';
  }
}
