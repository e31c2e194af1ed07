import {
  BatchQueue,
  EVENTS_FLUSH_INTERVAL_MS,
  MAX_BATCH_BYTES,
  MAX_EVENTS_PER_BATCH,
  MAX_REQUESTS_PER_BATCH,
  NETWORK_FLUSH_INTERVAL_MS,
  batchItems,
  crashBatch,
  isDroppable,
  itemBatches,
  rebuild,
  sealItem,
  sessionEndBatch,
  sessionStartBatch,
  type SealedItem,
} from './batcher.js';
import { instrumentFetch, instrumentXhr, type AnyFetch, type RecordedRequest } from './fetch.js';
import {
  memoryPersistence,
  pageHandoffPersistence,
  type HandOffQueue,
  type PageStorage,
  type PersistentQueue,
} from './persistence.js';
import type { NodeHooks } from './node.js';
import {
  detectDevice,
  holdOwner,
  installCrashHandlers,
  runtime,
  watchLifecycle,
  type AppStateLike,
} from './runtime.js';
import * as clean from './sanitize.js';
import { KEEPALIVE_MAX_BYTES, Transport, errorMessage, type FetchLike, type RetryInfo } from './transport.js';
import type { Batch, BatchHold, CrashReport, Device, FlightrecError, Outgoing, SdkEvent } from './types.js';
import { Scope, fingerprint, level as levelOf, reportContext, type Breadcrumb, type Level } from './scope.js';
import { outageBackoff } from './backoff.js';
import { salvage } from './salvage.js';
import { describeError } from './describeError.js';
import { uuidv4 } from './uuid.js';
import { within } from './within.js';
import { SDK_VERSION } from './version.js';

export { outageBackoff } from './backoff.js';
export { describeError } from './describeError.js';

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
  /**
   * Keeps unsent batches and the open session's buffer across restarts. Default: in memory; in
   * a browser, what a page could not send when it was left is handed to the next page load
   * through `localStorage` (`pageHandoffPersistence`).
   */
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
   * routes: names given here are added to `DEFAULT_SCRUBBED_PARAMS`; a function gets the
   * defaults and returns the whole list (`(d) => d.filter((n) => n !== 'code')`); false turns
   * all URL scrubbing off (user info and email addresses included).
   */
  scrubQueryParams?: clean.ScrubParams;
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
  /**
   * Browser: send on `visibilitychange` (hidden) and `pagehide` with keepalive; `pagehide` also
   * ends the session, and what does not fit the browser's 64 KiB keepalive budget is kept for
   * the next page load. Default true.
   */
  lifecycle?: boolean;
  /**
   * Node / Electron main: on `beforeExit`, SIGTERM and SIGINT, end the session and make one last
   * attempt to send what is queued (a retry wait under way is cut short, none is started), for
   * at most `exitFlushTimeoutMs`, then let the process end as it would have. Retry waits do not
   * keep the process alive: a script that ends while the service is unreachable exits after the
   * last attempt instead of waiting out the retry cycle. Default true.
   */
  flushOnExit?: boolean;
  /** The most the last attempt on exit may take, in all. Default 2000. */
  exitFlushTimeoutMs?: number;
  /** React Native: pass `AppState` to flush on background and end sessions as above. */
  appState?: AppStateLike;
  /** Gzip request bodies where the runtime can (CompressionStream or node:zlib). Default true. */
  compress?: boolean;
  /** Sent with every crash report and message (`production`, `staging`, …). */
  environment?: string;
  /**
   * False: start switched off until `setEnabled(true)` (consent): nothing is recorded, sent or
   * stored, and the queue a previous visit left is not even read. Default true.
   */
  enabled?: boolean;
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
  /** Default `fatal` for a fatal crash, else `error`. */
  level?: Level;
  /** Groups reports by these parts instead of the stack (`['checkout', 'timeout']`). */
  fingerprint?: string[];
}

/** Options of captureMessage: a message is never fatal and its level is its own argument. */
export type MessageOptions = Omit<CrashOptions, 'level' | 'isFatal'>;

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

/**
 * Batches in flight at once: in all, so that one throttled session does not stall the rest, and
 * per session, so that a burst is sent as fast as it is tracked instead of outgrowing the queue.
 */
const MAX_IN_FLIGHT = 6;
const MAX_PER_SESSION = 4;
/** Room for the batch envelope when checking that one item fits in a batch. */
const ENVELOPE_BYTES = 128;
/**
 * What a living client saves is held for it this long (`Batch.hold`), renewed every
 * HOLD_RENEW_MS while it lives: longer than the minute to which browsers slow the timers of a
 * hidden tab, so a hidden tab that lives keeps its session, and one that was killed has its
 * data sent by the next page load of another tab a few minutes later.
 */
const HOLD_MS = 5 * 60_000;
const MAX_PENDING_CRASHES = 20;

const HOLD_RENEW_MS = 60_000;

/**
 * One app's connection to flightrec. Tracked values are checked and serialised when tracked, then
 * buffered per session and sealed into batches every `flushIntervalMs` (network requests every
 * `networkFlushIntervalMs` and at session end), split by count and bytes. Batches of one session
 * go out one at a time, in order, so its start is acknowledged before its events; other
 * sessions' batches go alongside.
 */
export class FlightrecClient {
  /** Undefined only in a client disabled at construction (no apiKey, no endpoint, no fetch). */
  transport!: Transport;
  private readonly opts: FlightrecOptions;
  private device: Device = {};
  private readonly queue: BatchQueue;
  private persistence: PersistentQueue = memoryPersistence();
  private maxEvents = MAX_EVENTS_PER_BATCH;
  private maxRequests = MAX_REQUESTS_PER_BATCH;
  private maxBytes = MAX_BATCH_BYTES;
  private flushIntervalMs = EVENTS_FLUSH_INTERVAL_MS;
  private scrub: (url: string) => string = (u) => u;
  private abort = new AbortController();
  /** Aborted while the process is on its way out: every send then makes one last attempt. */
  private last = new AbortController();
  private readonly timers: Timer[] = [];
  private readonly uninstall: (() => void)[] = [];
  private ready: Promise<void> = Promise.resolve();
  private readonly unsampled = new Set<string>();
  private loaded = false;
  private session: OpenSession | undefined;
  /** The user, environment, tags, contexts and breadcrumbs reports carry. */
  private readonly scope = new Scope();
  /** setEnabled(false) (consent): nothing is recorded, sent or stored. */
  private on = true;
  /** Loading the stored queue waits for consent (`enabled: false` at construction). */
  private startLoad: (() => void) | undefined;
  /** Batches in flight per session, and in all. */
  private readonly lanes = new Map<string, number>();
  private inFlight = 0;
  /** Sent with keepalive on the way out of the page (still handed over until known to have arrived). */
  private readonly keptAlive = new Set<string>();
  /** Who holds what this client saves (`Batch.hold`): the browser tab, else the app. */
  private owner = 'app';
  private savedAt = 0;
  private handedOffAt = 0;
  /** The last hand-off was held for this page (a hidden page), not left to anyone (pagehide). */
  private handedOffHeld = false;
  /** Requests in flight per batch (two when one was sent again with keepalive). */
  private readonly copies = new Map<string, number>();
  /** Crashes reported before any session (see reportCrash). */
  private pendingCrashes: CrashReport[] = [];
  /** A retry or a run-out cycle since the last success: the queue then drops its oldest. */
  private failing = false;
  /** Why the client does nothing (set when the options could not work). */
  private disabled: string | undefined;
  private endedByExit = false;
  private handedOff: ReadonlySet<string> = new Set();
  private exitMark = '';
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
  /** Calls of the app's that are under way: their requests hold a Node process (nodeFetch.ts). */
  private awaited = 0;
  private invalidItems = 0;
  private sentBatches = 0;

  /** Node's process hooks and transport, given by the entry points that include them. */
  private readonly node: NodeHooks | undefined;

  /**
   * Never throws: options that cannot work leave a client that does nothing and says why
   * (onError, console). `node`: the Node hooks (`nodeHooks` of `@flightrec/sdk/node`), which the
   * default entry passes and `@flightrec/sdk/core` does not.
   */
  constructor(options: FlightrecOptions, node?: NodeHooks) {
    this.node = node;
    const issues: clean.Issues = [];
    this.opts = clean.readable(options, issues, 'options') as unknown as FlightrecOptions;
    this.queue = new BatchQueue({
      maxItems: this.opts.maxQueueItems ?? 10_000,
      onDrop: (batch) =>
        this.report({ kind: 'dropped', message: `queue full: dropped ${batch.items} ${batch.kind}`, batch }),
      dropNewest: () => !this.failing && !this.paused,
    });
    try {
      this.setUp(issues);
    } catch (err) {
      this.disable(errorMessage(err));
    }
  }

  private setUp(issues: clean.Issues): void {
    const opts = this.opts;
    if (issues.length) this.invalid('options: values left out', issues.splice(0), false);
    if (typeof opts.apiKey !== 'string' || !opts.apiKey) return this.disable('apiKey is required');
    if (typeof opts.endpoint !== 'string' || !opts.endpoint) return this.disable('endpoint is required');
    const onRetry = opts.onRetry;
    // Node with the exit flush: requests that do not hold the process (see nodeFetch.ts), so a
    // service that hangs cannot keep a finished script alive past exitFlushTimeoutMs; those of a
    // call the app awaits do (`held`), as a fetch would.
    const node = this.node;
    const own = !opts.fetch && opts.flushOnExit !== false && runtime() === 'node' && node?.available() === true;
    this.transport = new Transport({
      endpoint: opts.endpoint,
      apiKey: opts.apiKey,
      compress: opts.compress ?? true,
      fetch: opts.fetch ?? (own ? node!.fetch(() => this.awaited > 0) : undefined),
      retryDelaysMs: opts.retryDelaysMs,
      timeoutMs: opts.timeoutMs,
      // The exit flush on `beforeExit` cuts the waits, so they need not hold the process (and
      // must not: `beforeExit` only comes once nothing does).
      unrefWaits: opts.flushOnExit !== false,
      onRetry: (info) => {
        this.failing = true;
        onRetry?.(info);
      },
    });
    const detected = opts.detectDevice === false ? {} : detectDevice();
    const given = { ...detected, ...clean.readable(opts.device, issues, '/device') };
    this.device = { sdkVersion: SDK_VERSION, ...clean.device(given, issues) };
    if (issues.length) this.invalid('device: values left out of the session start', issues, false);
    this.scrub = clean.urlScrubber(opts.scrubQueryParams);
    this.flushIntervalMs = opts.flushIntervalMs ?? EVENTS_FLUSH_INTERVAL_MS;
    this.maxEvents = clamp(opts.maxEventsPerBatch ?? MAX_EVENTS_PER_BATCH, 1, MAX_EVENTS_PER_BATCH);
    this.maxRequests = clamp(opts.maxRequestsPerBatch ?? MAX_REQUESTS_PER_BATCH, 1, MAX_REQUESTS_PER_BATCH);
    this.maxBytes = clamp(opts.maxBatchBytes ?? MAX_BATCH_BYTES, 1024, 4 * 1024 * 1024);
    this.persistence = opts.persistence ?? defaultPersistence(opts) ?? memoryPersistence();
    this.owner = holdOwner(uuidv4);
    this.scope.environment = clean.str(opts.environment, 64);
    if (opts.enabled === false) {
      this.on = false;
      this.ready = new Promise<void>((r) => {
        this.startLoad = r;
      }).then(() => this.load());
    } else this.ready = this.load();
    this.timers.push(
      every(this.flushIntervalMs, () =>
        this.guard(undefined, () => {
          this.expireIdle();
          void this.sendPendingCrashes();
          this.sealEvents();
          void this.send(Date.now() >= this.resumeAt);
        }),
      ),
      every(opts.networkFlushIntervalMs ?? NETWORK_FLUSH_INTERVAL_MS, () =>
        this.guard(undefined, () => {
          this.sealRequests();
          void this.send(Date.now() >= this.resumeAt);
        }),
      ),
      every(opts.persistIntervalMs ?? 1000, () =>
        this.guard(undefined, () => {
          const now = Date.now();
          if (this.bufferDirty) this.schedulePersist();
          // A living client renews its holds, or another tab would take its data for a dead tab's.
          else if (now - this.savedAt >= HOLD_RENEW_MS && (this.queue.length > 0 || this.session))
            this.schedulePersist();
          const renew = this.handedOffHeld && this.handedOff.size > 0 && now - this.handedOffAt >= HOLD_RENEW_MS;
          if (renew) this.handOff(false);
        }),
      ),
    );
    if (opts.captureCrashes !== false) {
      const sink = (e: unknown, isFatal: boolean) => this.reportCrash(e, { isFatal, handled: false });
      this.uninstall.push(installCrashHandlers(sink, opts.crashFlushTimeoutMs ?? 2000, node?.onCrash));
    }
    if (opts.lifecycle !== false || opts.appState) {
      this.uninstall.push(
        watchLifecycle(
          { background: (exit) => this.background(exit === true), foreground: () => this.foreground() },
          opts.appState,
        ),
      );
    }
    if (opts.flushOnExit !== false && node) {
      this.uninstall.push(node.onExit((why) => this.exitFlush(why), opts.exitFlushTimeoutMs ?? 2000));
    }
    if (opts.autoSession && this.on) this.openSession();
  }

  private disable(reason: string): void {
    this.disabled = reason;
    this.closed = true;
    for (const t of this.timers.splice(0)) clearInterval(t);
    for (const u of this.uninstall.splice(0)) u();
    this.report({ kind: 'usage', message: `flightrec is disabled: ${reason}` });
    try {
      console.warn(`flightrec: disabled (${reason}); calls are ignored`);
    } catch {
      // no console
    }
  }

  /** Shut down (or disabled by options that could not work): calls are ignored. */
  get isClosed(): boolean {
    return this.closed || this.closing;
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

  /**
   * Starts a session (ending the current one, if any) and returns its id. Its user is `userId`
   * (none if not given), as `setUser` would set it; sessions the SDK starts itself (autoSession,
   * a page back from the back/forward cache) keep the current user.
   */
  startSession(opts: { userId?: string } = {}): string {
    return this.guard('', () => {
      if (this.refuseClosed('startSession') || !this.on) return '';
      this.scope.userId = clean.str(clean.readSafe(opts, 'userId'), clean.LIMITS.short);
      return this.openSession();
    });
  }

  private openSession(): string {
    return this.guard('', () => {
      if (this.refuseClosed('startSession') || !this.on) return '';
      if (this.session) void this.endCurrent();
      const id = uuidv4();
      const now = Date.now();
      this.endedByExit = false;
      this.session = {
        id,
        seq: 0,
        route: null,
        events: [],
        eventBytes: 0,
        requests: [],
        requestBytes: 0,
        startedAt: now,
        lastActivity: now,
      };
      const rate = this.opts.sampleRate ?? 1;
      if (!(rate >= 1) && !(Math.random() < rate)) {
        this.unsampled.add(id);
        return id;
      }
      const userId = this.scope.userId;
      this.enqueue(
        sessionStartBatch({
          sessionId: id,
          device: this.device,
          startedAt: now,
          ...(userId === undefined ? {} : { userId }),
        }),
      );
      if (this.pendingCrashes.length) void this.sendPendingCrashes();
      void this.send(false);
      return id;
    });
  }

  /**
   * The user of what follows, at any time (a log-in mid-visit does not split the session): later
   * crash reports and messages carry `userId`, and sessions started from now on too. `null` (or
   * an empty id) forgets it.
   */
  setUser(user: { id?: string | number } | string | null): void {
    this.guard(undefined, () => {
      const id = typeof user === 'object' && user !== null ? clean.readSafe(user, 'id') : user;
      this.scope.userId = clean.str(typeof id === 'number' ? String(id) : id, clean.LIMITS.short) || undefined;
    });
  }

  /** A tag of later reports (string → string; numbers and booleans are written as text); null removes it. */
  setTag(key: string, value: string | number | boolean | null): void {
    this.guard(undefined, () => this.scope.setTag(key, value));
  }

  setTags(tags: Record<string, string | number | boolean | null>): void {
    this.guard(undefined, () => {
      const t = clean.readable(tags);
      for (const k of Object.keys(t)) this.scope.setTag(k, t[k]);
    });
  }

  /** A named context of later reports (`setContext('cart', { items: 3 })`), at most 8 KB; null removes it. */
  setContext(name: string, context: Record<string, unknown> | null): void {
    this.guard(undefined, () => this.scope.setContext(name, context));
  }

  /** Adds to the ring of the last 100 breadcrumbs that every later report carries. */
  addBreadcrumb(b: Partial<Breadcrumb>): void {
    this.guard(undefined, () => {
      if (this.on && !this.closed) this.scope.addBreadcrumb(b);
    });
  }

  get breadcrumbs(): readonly Breadcrumb[] {
    return this.scope.breadcrumbs;
  }

  /** A request to the service itself (not the app's). */
  isOwnUrl(url: string): boolean {
    return this.guard(false, () => {
      return !!this.transport && normalizeUrl(url).startsWith(`${normalizeUrl(this.transport.endpoint)}/ingest/`);
    });
  }

  get enabled(): boolean {
    return this.on;
  }

  /**
   * Switches recording off and on at run time (consent). Off: nothing is recorded, sent or
   * stored; what was buffered, queued or stored and not yet sent is dropped, the open session
   * is left as it is (its end would be data too), and requests in flight are cancelled. On
   * again: a new session starts where `autoSession` says so, else when the app starts one.
   */
  setEnabled(enabled: boolean): void {
    this.guard(undefined, () => {
      if (this.closed) return;
      if (enabled === this.on) return;
      this.on = enabled === true;
      if (this.on) {
        this.startLoad?.();
        this.startLoad = undefined;
        if (this.opts.autoSession && !this.session) this.openSession();
        return;
      }
      this.session = undefined;
      this.pendingCrashes = [];
      this.scope.clearBreadcrumbs();
      for (const b of [...this.queue.list()]) this.queue.remove(b.id);
      this.abort.abort();
      this.abort = new AbortController();
      const p = this.persistence as Partial<HandOffQueue>;
      try {
        if (typeof p.handOff === 'function') p.handOff([], this.handedOff);
        else if (this.loaded) void this.persistence.save([]).catch(() => {});
      } catch {
        // storage refused: nothing of ours was written there either
      }
      this.handedOff = new Set();
      this.handedOffHeld = false;
    });
  }

  /** `from` defaults to the previous navigation's `to` in this session (null on the first). */
  trackNavigate(to: string, from?: string | null): number | undefined {
    return this.track(() => ({ type: 'navigate', to, from }));
  }

  trackTap(tap: { x: number; y: number; target?: string }): number | undefined {
    // Read inside the guard: a getter of the app's object may throw.
    return this.track(() => ({
      type: 'tap',
      x: clean.readSafe(tap, 'x'),
      y: clean.readSafe(tap, 'y'),
      target: clean.readSafe(tap, 'target'),
    }));
  }

  trackCustom(name: string, properties: Record<string, unknown> = {}): number | undefined {
    return this.track(() => ({ type: 'custom', name, properties }));
  }

  /** A network call as a session event (the service also files it under network logs). */
  trackNetwork(r: {
    method: string;
    url: string;
    statusCode?: number;
    duration: number;
    error?: string | null;
    timestamp?: number;
  }): number | undefined {
    return this.track(() => {
      const fields = clean.readable(r, undefined, '');
      return { ...fields, type: 'network', ts: fields.timestamp };
    });
  }

  /**
   * Reports an error as a crash of the current session: its message and stack trace. Buffered
   * events are sealed first, so they reach the service before the crash. The promise settles when
   * the queue has been sent (or could not be); it never rejects.
   */
  reportCrash(error: unknown, opts: CrashOptions = {}): Promise<void> {
    return this.held(() => this.capture(error, opts, false));
  }

  /** `reportCrash` of an error the app caught: `handled` unless told otherwise. */
  captureException(error: unknown, opts: CrashOptions = {}): Promise<void> {
    return this.held(() => this.capture(error, { handled: true, ...clean.readable(opts) }, false));
  }

  /**
   * A handled report without an error (Sentry's captureMessage): level `info` by default, or
   * `warning`; its message stands for its stack, so reports group by message.
   */
  captureMessage(message: string, level: Level = 'info', opts: MessageOptions = {}): Promise<void> {
    return this.held(() => {
      return this.capture(message, { ...clean.readable(opts), handled: true, isFatal: false, level }, true);
    });
  }

  private capture(error: unknown, opts: CrashOptions, asMessage: boolean): Promise<void> {
    if (this.refuseClosed('reportCrash')) return Promise.resolve();
    this.expireIdle();
    if (!this.session && this.opts.autoSession) this.openSession();
    const s = this.session;
    if (!this.on || (s && this.unsampled.has(s.id))) return Promise.resolve();
    const isFatal = clean.readSafe(opts, 'isFatal');
    const handled = clean.readSafe(opts, 'handled');
    const lvl = levelOf(clean.readSafe(opts, 'level'), isFatal === true ? 'fatal' : 'error');
    const d = asMessage ? { message: String(error), stackTrace: String(error) } : describeError(error);
    let c: CrashReport = {
      sessionId: s?.id ?? '',
      ...clean.crash({ ...d, isFatal, handled }),
      timestamp: Date.now(),
      ...this.scope.report(lvl, fingerprint(clean.readSafe(opts, 'fingerprint'))),
    };
    if (this.opts.beforeSend) {
      const out = this.filter({ kind: 'crash', crash: c });
      if (out?.kind !== 'crash') return Promise.resolve();
      const o = clean.readable(out.crash);
      const timestamp = clean.timestamp(o.timestamp);
      c = { sessionId: c.sessionId, ...clean.crash(o), timestamp, ...reportContext(o, lvl) };
    }
    if (!s) {
      // Before any session (an early throw, autoSession off): kept for the session the app
      // starts next; if none has started by the next flush tick, or the app is going down,
      // a session is started for them.
      if (this.pendingCrashes.length >= MAX_PENDING_CRASHES) this.pendingCrashes.shift();
      this.pendingCrashes.push(c);
      return isFatal ? this.sendPendingCrashes() : Promise.resolve();
    }
    this.sealEvents();
    // A fatal crash is the app going down: its buffered requests would be lost with it.
    if (isFatal) this.sealRequests();
    s.lastActivity = Date.now();
    this.enqueue(crashBatch(c));
    return this.send(true);
  }

  /**
   * Crashes reported before any session go into the open session, or else into a session of
   * their own: started at the first crash, with the last known user, and ended at the last.
   */
  private sendPendingCrashes(): Promise<void> {
    const crashes = this.pendingCrashes.splice(0);
    if (crashes.length === 0) return Promise.resolve();
    const s = this.session;
    if (s) {
      if (!this.unsampled.has(s.id)) this.enqueue(...crashes.map((c) => crashBatch({ ...c, sessionId: s.id })));
      return this.send(true);
    }
    const rate = this.opts.sampleRate ?? 1;
    if (!(rate >= 1) && !(Math.random() < rate)) return Promise.resolve();
    const id = uuidv4();
    const startedAt = Math.min(...crashes.map((c) => c.timestamp));
    const userId = this.scope.userId;
    this.enqueue(
      sessionStartBatch({ sessionId: id, device: this.device, startedAt, ...(userId === undefined ? {} : { userId }) }),
      ...crashes.map((c) => crashBatch({ ...c, sessionId: id })),
      sessionEndBatch(id, Math.max(startedAt, ...crashes.map((c) => c.timestamp))),
    );
    return this.send(true);
  }

  /** Ends the current session: its buffered events and requests are sealed, then the end. */
  endSession(): Promise<void> {
    return this.held(() => this.endCurrent());
  }

  /** Seals everything buffered and sends the queue; settles when it is empty or a batch ran out of retries. */
  flush(): Promise<void> {
    return this.held(() => {
      void this.sendPendingCrashes();
      this.sealEvents();
      this.sealRequests();
      return this.send(true);
    });
  }

  /**
   * Ends the session, tries to send everything within `timeoutMs` (default 10 s), then stops:
   * what is still unsent stays in the persistent queue for the next run.
   */
  shutdown(opts: { timeoutMs?: number } = {}): Promise<void> {
    return this.held(() => this.close(opts));
  }

  private async close(opts: { timeoutMs?: number }): Promise<void> {
    if (this.closed || this.closing) return;
    this.closing = true;
    try {
      for (const t of this.timers) clearInterval(t);
      for (const u of this.uninstall.splice(0)) u();
      void this.sendPendingCrashes();
      void this.endCurrent();
      const pending = this.send(true);
      const timeoutMs = clean.readSafe(opts, 'timeoutMs');
      await within(pending, typeof timeoutMs === 'number' ? timeoutMs : 10_000);
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
    if (this.disabled) return base as F;
    return this.guard(base, () => instrumentFetch(base, this.instrumentOptions())) as F;
  }

  /**
   * Records the requests made through XMLHttpRequest (`xhr`, default the global one: axios,
   * React Native's fetch). Returns the function that undoes it; `shutdown()` does too.
   */
  instrumentXhr(xhr?: Parameters<typeof instrumentXhr>[1]): () => void {
    return this.guard(
      () => {},
      () => {
        if (this.disabled) return () => {};
        const undo = instrumentXhr(this.instrumentOptions(), xhr);
        this.uninstall.push(undo);
        return undo;
      },
    );
  }

  /** Records a request made outside fetch and XHR (native modules); sent to /ingest/network. */
  recordRequest(r: RecordedRequest, sessionId = this.session?.id): void {
    this.guard(undefined, () => {
      if (!sessionId || this.closed || !this.on || this.unsampled.has(sessionId)) return;
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
    const own = `${normalizeUrl(this.transport.endpoint)}/ingest/`;
    return {
      ignore: (url: string) => normalizeUrl(url).startsWith(own),
      context: () => this.session?.id,
      record: (r: RecordedRequest, sessionId: unknown) => this.recordRequest(r, sessionId as string | undefined),
    };
  }

  /** `read` gives the app's values; it runs inside the guard, as reading them may throw. */
  private track(read: () => Record<string, unknown>): number | undefined {
    return this.guard(undefined, () => {
      if (!this.on) return undefined;
      let raw = read();
      const ts = raw.ts;
      const s = this.current(`track ${String(raw.type)}`);
      if (!s || this.unsampled.has(s.id)) return undefined;
      if (raw.type === 'navigate' && raw.from === undefined) raw = { ...raw, from: s.route };
      const issues: clean.Issues = [];
      const fields = clean.eventFields(raw, this.scrub, issues, this.maxBytes);
      let ev =
        fields && ({ ...fields, sessionId: s.id, timestamp: clean.timestamp(ts), sequenceNumber: s.seq } as SdkEvent);
      if (ev && this.opts.beforeSend) {
        const out = this.filter({ kind: 'event', event: ev });
        if (out?.kind !== 'event') return undefined;
        const again = clean.eventFields(clean.readable(out.event, issues, ''), (u) => u, issues, this.maxBytes);
        ev =
          again &&
          ({
            ...again,
            sessionId: s.id,
            timestamp: clean.timestamp(out.event.timestamp),
            sequenceNumber: s.seq,
          } as SdkEvent);
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
    if (!this.session && this.opts.autoSession) this.openSession();
    if (!this.session) this.report({ kind: 'usage', message: `${call} called without a session` });
    return this.session;
  }

  private expireIdle(): void {
    const s = this.session;
    const idle = this.opts.autoSession ? (this.opts.idleTimeoutMs ?? 30 * 60_000) : 0;
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

  /**
   * The app leaves the screen; `exit`: the page is being left (pagehide). Everything buffered is
   * sealed and, in a browser, sent at once with keepalive within the page's 64 KiB budget (the
   * page may not run another line); on exit the session is ended first. What is left is handed
   * to the next page load (or saved to the app's persistence), and taken back if the page
   * returns.
   */
  private background(exit: boolean): void {
    this.guard(undefined, () => {
      this.backgroundAt ??= Date.now();
      // The page or app may be gone before the answer: keepalive lets small requests finish.
      this.keepalive = true;
      void this.sendPendingCrashes();
      if (runtime() !== 'browser') {
        void this.flush();
        this.schedulePersist();
        return;
      }
      if (exit && this.session) {
        this.endedByExit = true;
        void this.endCurrent();
      } else {
        this.sealEvents();
        this.sealRequests();
      }
      this.paused = false;
      this.drainForExit(exit);
      this.handOff(exit);
    });
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
  private drainForExit(exit: boolean): void {
    if (!this.loaded || this.closed || !this.on) return;
    let budget = KEEPALIVE_MAX_BYTES - this.transport.keepaliveInFlight;
    const unacknowledged = new Set(
      this.queue
        .list()
        .filter((b) => b.kind === 'session')
        .map((b) => b.sessionId),
    );
    const candidates = (data: boolean) =>
      this.queue
        .list()
        .filter(
          (b) =>
            isDroppable(b) === data &&
            !this.keptAlive.has(b.id) &&
            (exit || !this.queue.inFlight.has(b.id)) &&
            (!unacknowledged.has(b.sessionId) || b.kind === 'session'),
        );
    for (const b of candidates(false)) {
      const size = clean.utf8Length(b.body);
      if (size > budget) continue;
      budget -= size;
      this.launch(b, true, true);
    }
    for (const b of candidates(true)) {
      if (budget < 256) break;
      let next = b;
      let size = clean.utf8Length(b.body);
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
        if (!first || first.items >= items.length || clean.utf8Length(first.body) > budget) continue;
        this.queue.replace(b.id, [first, ...rebuild(b, items.slice(first.items))]);
        next = first;
        size = clean.utf8Length(first.body);
      }
      budget -= size;
      this.launch(next, true, true);
    }
  }

  /**
   * Leaves what is not known to have arrived to the next page load, in place of this page's
   * earlier hand-off. A hidden page holds it (another tab leaves it alone while this one
   * lives); a page being left (`exit`) holds nothing.
   */
  private handOff(exit: boolean): void {
    if (!this.loaded || !this.on) return;
    const left = this.snapshot(exit ? undefined : this.hold());
    const replacing = this.handedOff;
    this.handedOff = new Set(left.map((b) => b.id));
    this.handedOffAt = Date.now();
    this.handedOffHeld = !exit;
    try {
      const p = this.persistence as Partial<HandOffQueue>;
      if (typeof p.handOff === 'function') p.handOff(left, replacing);
      else
        void this.persistence
          .save(left)
          .catch((err: unknown) =>
            this.report({ kind: 'persistence', message: 'could not save the queue', cause: err }),
          );
    } catch (err) {
      this.report({ kind: 'persistence', message: 'could not hand the queue over', cause: err });
    }
  }

  private foreground(): void {
    this.guard(undefined, () => {
      this.keepalive = false;
      const p = this.persistence as Partial<HandOffQueue>;
      if (this.backgroundAt !== undefined && typeof p.reclaim === 'function') {
        try {
          // What was handed over, the provisional end of the open session included.
          p.reclaim(this.handedOff);
          this.handedOff = new Set();
          this.handedOffHeld = false;
        } catch {
          // the next page load sends them too; the service collapses the repeat
        }
      }
      const at = this.backgroundAt;
      this.backgroundAt = undefined;
      if (this.endedByExit && !this.session && !this.closed) {
        // Back from the back/forward cache: the exit ended the session, the app did not.
        this.openSession();
        return;
      }
      if (!this.opts.autoSession || at === undefined) return;
      if (this.session && Date.now() - at >= (this.opts.backgroundTimeoutMs ?? 30_000)) {
        void this.endCurrent(at);
        this.openSession();
      } else if (!this.session) this.openSession();
    });
  }

  /**
   * Node: the process is ending (`beforeExit`) or told to (a signal): the session is ended and
   * everything queued gets one last attempt (a retry wait under way ends at once), for at most
   * `exitFlushTimeoutMs`; what is still unsent then stays queued (and persisted). On
   * `beforeExit` nothing is tried twice without progress, or a service that is down would keep
   * the process alive for ever.
   */
  private exitFlush(why: 'beforeExit' | 'signal'): Promise<void> {
    return this.guard(Promise.resolve(), () => {
      if (this.closed || this.closing) return Promise.resolve();
      const nothing = !this.session && this.queue.length === 0 && this.pendingCrashes.length === 0;
      if (why === 'beforeExit' && nothing) return Promise.resolve();
      const last = this.last;
      last.abort();
      // An app that goes on living (its own signal handler, new work from `beforeExit`) gets
      // its retries back.
      const over = () => {
        if (this.last === last) this.last = new AbortController();
      };
      void this.sendPendingCrashes();
      void this.endCurrent();
      if (why === 'beforeExit') {
        const mark = `${this.sentBatches}/${this.queue.length}/${this.queue.items}/${this.rejected}`;
        if (mark === this.exitMark) {
          over();
          return Promise.resolve();
        }
        this.exitMark = mark;
      }
      const done = this.send(true).then(() => this.persisting);
      // An attempt in flight (a service that hangs) is cut at the bound; its batch stays queued.
      const t = setTimeout(() => {
        this.paused = true;
        this.abort.abort();
        this.abort = new AbortController();
      }, this.opts.exitFlushTimeoutMs ?? 2000);
      void done.finally(() => {
        clearTimeout(t);
        over();
      });
      return done;
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
    if (this.closed || !this.on) return Promise.resolve();
    if (!this.idle) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.idle = { promise, resolve };
    }
    const { promise } = this.idle;
    void this.ready.then(() => this.dispatch());
    return promise;
  }

  /**
   * Starts what may go: in queue order, up to MAX_PER_SESSION data batches of a session at once
   * (their sequence numbers order them on the service), while a session start, end or crash goes
   * alone, after everything before it in its session and before anything after it: a start is
   * acknowledged before its events are sent, an end goes after its last events.
   */
  private dispatch(): void {
    if (!this.closed && !this.paused && this.on) {
      const blocked = new Set<string>();
      for (const b of [...this.queue.list()]) {
        if (this.inFlight >= MAX_IN_FLIGHT) break;
        const sid = b.sessionId;
        if (blocked.has(sid)) continue;
        const barrier = !isDroppable(b);
        if (this.queue.inFlight.has(b.id)) {
          if (barrier) blocked.add(sid);
          continue;
        }
        const n = this.lanes.get(sid) ?? 0;
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

  /** `kept`: sent with keepalive within the budget the drain counted, so not handed over. */
  private launch(b: Batch, keepalive: boolean, kept = false): void {
    const sid = b.sessionId;
    this.lanes.set(sid, (this.lanes.get(sid) ?? 0) + 1);
    this.inFlight++;
    this.copies.set(b.id, (this.copies.get(b.id) ?? 0) + 1);
    this.queue.inFlight.add(b.id);
    if (kept) this.keptAlive.add(b.id);
    this.deliver(b, keepalive)
      .catch((err: unknown) => this.report({ kind: 'internal', message: `send: ${errorMessage(err)}`, cause: err }))
      .finally(() => {
        const n = (this.lanes.get(sid) ?? 1) - 1;
        if (n > 0) this.lanes.set(sid, n);
        else this.lanes.delete(sid);
        this.inFlight--;
        const c = (this.copies.get(b.id) ?? 1) - 1;
        if (c > 0) this.copies.set(b.id, c);
        else {
          this.copies.delete(b.id);
          this.queue.inFlight.delete(b.id);
        }
        if (kept) this.keptAlive.delete(b.id);
        this.dispatch();
      });
  }

  private async deliver(b: Batch, keepalive: boolean): Promise<void> {
    const r = await this.transport.send(b.path, b.body, this.abort.signal, { keepalive, last: this.last.signal });
    if (r.outcome === 'aborted') return;
    if (r.outcome !== 'failed') this.outages = 0;
    if (r.outcome === 'sent') {
      this.failing = false;
      // Sent twice (again with keepalive on the way out of a page): counted once.
      if (this.queue.remove(b.id)) this.sentBatches++;
      this.released(b.id);
    } else if (r.outcome === 'rejected') {
      if (this.queue.list().includes(b)) this.rejectedBatch(b, r.status, r.error, r.body);
      this.released(b.id);
    } else {
      this.failing = true;
      this.paused = true;
      this.outages++;
      this.resumeAt = Date.now() + outageBackoff(this.outages, this.flushIntervalMs);
      this.report({ kind: 'retry-exhausted', status: r.status, message: r.error, batch: b });
    }
    this.schedulePersist();
  }

  /** A refused batch is dropped, except what `salvage` can save (salvage.ts). */
  private rejectedBatch(b: Batch, status: number, error: string, text: string): void {
    const saved = salvage(b, status, text);
    if (saved) {
      this.rejected += saved.lost;
      if (saved.note) this.report({ kind: 'rejected', status, message: `${error} (${saved.note})`, batch: b });
      return this.queue.replace(b.id, saved.parts);
    }
    this.rejected += b.items;
    this.queue.remove(b.id);
    this.report({ kind: 'rejected', status, message: error, batch: b });
  }

  private async load(): Promise<void> {
    try {
      const stored = await this.persistence.load({ owner: this.owner, now: Date.now() });
      this.queue.prepend(stored.map(({ hold: _, ...b }) => b));
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
  private snapshot(hold?: BatchHold): Batch[] {
    // Batches on their way (with keepalive too: that request may fail after the page is gone)
    // are kept until known to have arrived; the service collapses a second sending.
    const out = this.queue.snapshot();
    const s = this.session;
    if (s && !this.unsampled.has(s.id)) {
      out.push(
        ...itemBatches('events', s.id, s.events, this.maxEvents, this.maxBytes),
        ...itemBatches('network', s.id, s.requests, this.maxRequests, this.maxBytes),
        sessionEndBatch(s.id, s.lastActivity),
      );
    }
    return hold ? out.map((b) => ({ ...b, hold })) : out;
  }

  private hold(): BatchHold {
    return { owner: this.owner, until: Date.now() + HOLD_MS };
  }

  /** A handed-over batch that arrived (or was refused for good) leaves the hand-off. */
  private released(id: string): void {
    if (!this.handedOff.has(id)) return;
    const left = new Set(this.handedOff);
    left.delete(id);
    this.handedOff = left;
    try {
      (this.persistence as Partial<HandOffQueue>).reclaim?.(new Set([id]));
    } catch {
      // still handed over: the next page load sends it again and the service collapses it
    }
  }

  private schedulePersist(): void {
    // Saving before the stored batches are loaded would overwrite them; off, nothing is stored.
    if (!this.loaded || !this.on) return;
    this.persistDirty = true;
    this.persisting ??= (async () => {
      try {
        while (this.persistDirty) {
          this.persistDirty = false;
          this.bufferDirty = false;
          this.savedAt = Date.now();
          await this.persistence.save(this.snapshot(this.hold()));
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
    this.report({
      kind: 'usage',
      message: this.disabled
        ? `${call} ignored: flightrec is disabled (${this.disabled})`
        : `${call} called after shutdown`,
    });
    return true;
  }

  private invalid(message: string, issues: string[], dropped: boolean): void {
    if (dropped) this.invalidItems++;
    this.report({ kind: 'invalid', message, dropped, issues });
  }

  /**
   * A public entry point whose promise the app may await: guarded, and in Node its requests
   * hold the process as a fetch would (the SDK's background sends do not). A retry wait does
   * not: when nothing else is left, the exit flush makes the last attempt and the call settles.
   */
  private held(fn: () => Promise<void>): Promise<void> {
    this.awaited++;
    const p = this.guard(Promise.resolve(), fn);
    return p.finally(() => {
      this.awaited--;
    });
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
 * In a browser, what a page could not send when it was left goes to the next page load through
 * `localStorage`, under a key per endpoint and API key (a hash: the key itself is not written).
 * Undefined elsewhere, or where storage is refused (privacy modes, sandboxed frames).
 */
function defaultPersistence(opts: FlightrecOptions): PersistentQueue | undefined {
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
