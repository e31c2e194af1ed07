// The client: sessions and what is tracked into them, wired to the parts that do the rest: the
// lanes that send the queue (lanes.ts), the store that saves it (store.ts), the open session's
// buffer (session.ts) and the optional parts it is given, Node's process hooks and exit flush
// (node.ts, exitFlush.ts) and the browser's page hand-off (pageHandOff.ts), so that a bundle
// that leaves them out does not carry them.
import {
  BatchQueue,
  EVENTS_FLUSH_INTERVAL_MS,
  MAX_BATCH_BYTES,
  MAX_EVENTS_PER_BATCH,
  MAX_REQUESTS_PER_BATCH,
  NETWORK_FLUSH_INTERVAL_MS,
  crashBatch,
  itemBatches,
  sessionEndBatch,
  sessionStartBatch,
} from './batcher.js';
import { describeError } from './describeError.js';
import { instrumentFetch, instrumentXhr, type AnyFetch, type RecordedRequest } from './fetch.js';
import { checkCrash, checkEvent, checkRequest, type Checks } from './items.js';
import { Lanes } from './lanes.js';
import type { NodeHooks } from './node.js';
import type { ClientStats, CrashOptions, FlightrecOptions, MessageOptions } from './options.js';
import type { PageHandOff, PageLink } from './pageHandOff.js';
import { detectDevice, holdOwner, installCrashHandlers, runtime, watchLifecycle } from './runtime.js';
import * as clean from './sanitize.js';
import { Scope, fingerprint, level as levelOf, type Breadcrumb, type Level } from './scope.js';
import {
  eventsFull,
  openSession as newSession,
  provisional,
  requestsFull,
  sealEvents,
  sealRequests,
  type BatchLimits,
  type OpenSession,
} from './session.js';
import { Store } from './store.js';
import { Transport, errorMessage } from './transport.js';
import type { Batch, CrashReport, Device, FlightrecError, Outgoing } from './types.js';
import { uuidv4 } from './uuid.js';
import { SDK_VERSION } from './version.js';
import { within } from './within.js';

export { outageBackoff } from './backoff.js';
export { describeError } from './describeError.js';
export type { ClientStats, CrashOptions, FlightrecOptions, MessageOptions } from './options.js';

/** The optional parts a client is given (the entry points that include them pass them). */
export interface ClientHooks {
  /** Node's process hooks and exit flush: `nodeHooks` of `@flightrec/sdk/node`. */
  node?: NodeHooks;
  /** The browser's page hand-off: `pageHandOff` of `@flightrec/sdk/browser`. */
  page?: PageHandOff;
}

type Timer = ReturnType<typeof setInterval>;

const MAX_PENDING_CRASHES = 20;

/**
 * One app's connection to flightrec. Tracked values are checked and serialised when tracked, then
 * buffered per session and sealed into batches every `flushIntervalMs` (network requests every
 * `networkFlushIntervalMs` and at session end), split by count and bytes. Batches of one session
 * go out one at a time, in order, so its start is acknowledged before its events; other
 * sessions' batches go alongside.
 */
export class FlightrecClient {
  /** Undefined only in a client disabled at construction (no apiKey, no endpoint, no fetch). */
  transport: Transport | undefined;
  private readonly opts: Partial<FlightrecOptions>;
  private device: Device = {};
  private readonly queue: BatchQueue;
  private readonly limits: BatchLimits = {
    maxEvents: MAX_EVENTS_PER_BATCH,
    maxRequests: MAX_REQUESTS_PER_BATCH,
    maxBytes: MAX_BATCH_BYTES,
  };
  private flushIntervalMs = EVENTS_FLUSH_INTERVAL_MS;
  private scrub: (url: string) => string = (u) => u;
  private readonly lanes: Lanes;
  private readonly store: Store;
  private readonly timers: Timer[] = [];
  private readonly uninstall: (() => void)[] = [];
  private ready: Promise<void> = Promise.resolve();
  private readonly unsampled = new Set<string>();
  private session: OpenSession | undefined;
  /** The user, environment, tags, contexts and breadcrumbs reports carry. */
  private readonly scope = new Scope();
  /** setEnabled(false) (consent): nothing is recorded, sent or stored. */
  private on = true;
  /** Loading the stored queue waits for consent (`enabled: false` at construction). */
  private startLoad: (() => void) | undefined;
  /** Crashes reported before any session (see reportCrash). */
  private pendingCrashes: CrashReport[] = [];
  /** Why the client does nothing (set when the options could not work). */
  private disabled: string | undefined;
  /** The page was left (pagehide) and that ended the session. */
  private endedByExit = false;
  private backgroundAt: number | undefined;
  private closed = false;
  private closing = false;
  private invalidItems = 0;
  /** Calls of the app's that are under way: their requests hold a Node process (nodeFetch.ts). */
  private awaited = 0;
  /** The page hand-off, in a browser client given one. */
  private page: PageLink | undefined;

  /** Node's process hooks and transport, and the page hand-off, given by the entry points that include them. */
  private readonly hooks: ClientHooks;

  /**
   * Never throws: options that cannot work leave a client that does nothing and says why
   * (onError, console). `hooks`: the optional parts (`nodeHooks` of `@flightrec/sdk/node`,
   * `pageHandOff` of `@flightrec/sdk/browser`), which the default entry passes and
   * `@flightrec/sdk/core` does not.
   */
  constructor(options: FlightrecOptions, hooks: ClientHooks = {}) {
    const issues: clean.Issues = [];
    this.opts = clean.readableAs(options, issues, 'options');
    this.hooks = clean.readableAs(hooks);
    this.queue = new BatchQueue({
      maxItems: this.opts.maxQueueItems ?? 10_000,
      onDrop: (batch) =>
        this.report({ kind: 'dropped', message: `queue full: dropped ${batch.items} ${batch.kind}`, batch }),
      dropNewest: () => !this.lanes.failing && !this.lanes.paused,
    });
    const report = (e: FlightrecError) => this.report(e);
    const self = this;
    this.lanes = new Lanes({
      queue: this.queue,
      get transport() {
        return self.transport;
      },
      get flushIntervalMs() {
        return self.flushIntervalMs;
      },
      active: () => !this.closed && this.on,
      ready: () => this.ready,
      report,
      persist: () => this.store.schedule(),
      released: (id) => this.page?.released(id),
    });
    this.store = new Store({
      queue: this.queue,
      active: () => this.on,
      hasSession: () => this.session !== undefined,
      openBatches: () => {
        const s = this.session;
        return s && !this.unsampled.has(s.id) ? provisional(s, this.limits) : [];
      },
      report,
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
    const { apiKey, endpoint } = opts;
    if (typeof apiKey !== 'string' || !apiKey || typeof endpoint !== 'string' || !endpoint) {
      this.disable(typeof apiKey !== 'string' || !apiKey ? 'apiKey is required' : 'endpoint is required');
      return;
    }
    const onRetry = opts.onRetry;
    const { node, page } = this.hooks;
    // Node with the exit flush: requests that do not hold the process (see nodeFetch.ts), so a
    // service that hangs cannot keep a finished script alive past exitFlushTimeoutMs; those of a
    // call the app awaits do (`held`), as a fetch would.
    const own = !opts.fetch && opts.flushOnExit !== false && runtime() === 'node' && node?.available() === true;
    const transport = new Transport({
      endpoint,
      apiKey,
      compress: opts.compress ?? true,
      fetch: opts.fetch ?? (own ? node?.fetch(() => this.awaited > 0) : undefined),
      retryDelaysMs: opts.retryDelaysMs,
      timeoutMs: opts.timeoutMs,
      // The exit flush on `beforeExit` cuts the waits, so they need not hold the process (and
      // must not: `beforeExit` only comes once nothing does).
      unrefWaits: opts.flushOnExit !== false,
      onRetry: (info) => {
        this.lanes.failing = true;
        onRetry?.(info);
      },
    });
    this.transport = transport;
    const detected = opts.detectDevice === false ? {} : detectDevice();
    const given = { ...detected, ...clean.readable(opts.device, issues, '/device') };
    this.device = { sdkVersion: SDK_VERSION, ...clean.device(given, issues) };
    if (issues.length) this.invalid('device: values left out of the session start', issues, false);
    this.scrub = clean.urlScrubber(opts.scrubQueryParams);
    this.flushIntervalMs = opts.flushIntervalMs ?? EVENTS_FLUSH_INTERVAL_MS;
    this.limits.maxEvents = clamp(opts.maxEventsPerBatch ?? MAX_EVENTS_PER_BATCH, 1, MAX_EVENTS_PER_BATCH);
    this.limits.maxRequests = clamp(opts.maxRequestsPerBatch ?? MAX_REQUESTS_PER_BATCH, 1, MAX_REQUESTS_PER_BATCH);
    this.limits.maxBytes = clamp(opts.maxBatchBytes ?? MAX_BATCH_BYTES, 1024, 4 * 1024 * 1024);
    const store = this.store;
    // In a browser with the page hand-off, the default is its queue in localStorage.
    store.persistence =
      opts.persistence ?? page?.persistence({ endpoint, apiKey, lifecycle: opts.lifecycle }) ?? store.persistence;
    store.owner = holdOwner(uuidv4);
    if (page && runtime() === 'browser') {
      this.page = page.attach({
        queue: this.queue,
        lanes: this.lanes,
        store,
        transport,
        on: () => this.on,
        open: () => !this.closed,
        report: (e) => this.report(e),
      });
    }
    this.scope.environment = clean.str(opts.environment, 64);
    if (opts.enabled === false) {
      this.on = false;
      this.ready = new Promise<void>((r) => {
        this.startLoad = r;
      }).then(() => store.load());
    } else this.ready = store.load();
    this.timers.push(
      every(this.flushIntervalMs, () =>
        this.guard(undefined, () => {
          this.expireIdle();
          void this.sendPendingCrashes();
          this.sealEvents();
          void this.send(Date.now() >= this.lanes.resumeAt);
        }),
      ),
      every(opts.networkFlushIntervalMs ?? NETWORK_FLUSH_INTERVAL_MS, () =>
        this.guard(undefined, () => {
          this.sealRequests();
          void this.send(Date.now() >= this.lanes.resumeAt);
        }),
      ),
      every(opts.persistIntervalMs ?? 1000, () =>
        this.guard(undefined, () => {
          const now = Date.now();
          store.tick(now);
          this.page?.tick(now);
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
      const flush = node.exitFlush({
        queue: this.queue,
        lanes: this.lanes,
        store,
        closed: () => this.closed || this.closing,
        quiet: () => !this.session && this.pendingCrashes.length === 0,
        endAll: () => {
          void this.sendPendingCrashes();
          void this.endCurrent();
        },
        boundMs: opts.exitFlushTimeoutMs ?? 2000,
      });
      this.uninstall.push(
        node.onExit((why) => this.guard(Promise.resolve(), () => flush(why)), opts.exitFlushTimeoutMs ?? 2000),
      );
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
      rejected: this.lanes.rejected,
      invalid: this.invalidItems,
      sentBatches: this.lanes.sentBatches,
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
      this.session = newSession(id, now);
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
      const t = this.transport;
      return t !== undefined && normalizeUrl(url).startsWith(`${normalizeUrl(t.endpoint)}/ingest/`);
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
      this.lanes.cancel();
      if (!this.page?.forget() && this.store.loaded) {
        try {
          void this.store.persistence.save([]).catch(() => {});
        } catch {
          // storage refused: nothing of ours was written there either
        }
      }
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
    const report: CrashReport = {
      sessionId: s?.id ?? '',
      ...clean.crash({ ...d, isFatal, handled }),
      timestamp: Date.now(),
      ...this.scope.report(lvl, fingerprint(clean.readSafe(opts, 'fingerprint'))),
    };
    const c = checkCrash(report, lvl, this.checks());
    if (!c) return Promise.resolve();
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
      this.lanes.cancel();
      await pending;
      await this.ready;
      this.store.schedule();
      await this.store.persisting;
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
      const checked = checkRequest(r, uuidv4(), this.checks(), issues);
      if (checked === 'filtered') return;
      if (checked === 'invalid') return void this.invalid('network request dropped', issues, true);
      const { item } = checked;
      if (issues.length) this.invalid('network request: values left out', issues, false);
      const s = this.session;
      if (s?.id !== sessionId) {
        // Finished after its session ended: that session's buffer is already sealed.
        this.enqueue(...itemBatches('network', sessionId, [item], this.limits.maxRequests, this.limits.maxBytes));
        return;
      }
      s.requests.push(item);
      s.requestBytes += item.bytes;
      this.store.bufferDirty = true;
      if (requestsFull(s, this.limits)) {
        this.sealRequests();
        void this.send(false);
      }
    });
  }

  private instrumentOptions() {
    const own = `${normalizeUrl(this.transport?.endpoint ?? '')}/ingest/`;
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
      const _ts = raw.ts;
      const s = this.current(`track ${String(raw.type)}`);
      if (!s || this.unsampled.has(s.id)) return undefined;
      if (raw.type === 'navigate' && raw.from === undefined) raw = { ...raw, from: s.route };
      const issues: clean.Issues = [];
      const checked = checkEvent(raw, s, this.checks(), issues);
      if (checked === 'filtered') return undefined;
      if (checked === 'invalid') return void this.invalid(`${String(raw.type)} event dropped`, issues, true);
      const { kept: ev, item } = checked;
      if (issues.length) this.invalid(`${ev.type} event: values left out`, issues, false);
      s.seq++;
      s.lastActivity = Date.now();
      if (ev.type === 'navigate') s.route = raw.to === undefined ? ev.to : String(raw.to);
      s.events.push(item);
      s.eventBytes += item.bytes;
      this.store.bufferDirty = true;
      if (eventsFull(s, this.limits)) {
        // A full batch goes now rather than growing the buffer until the next tick.
        this.sealEvents();
        void this.send(false);
      }
      return ev.sequenceNumber;
    });
  }

  /** How tracked values are checked (items.ts): the app's `beforeSend`, and a throw of it dropping the item. */
  private checks(): Checks {
    const hook = this.opts.beforeSend;
    const filter = (item: Outgoing) => {
      try {
        return hook ? hook(item) : item;
      } catch (err) {
        // A scrubbing hook that fails must not let unscrubbed data through.
        this.invalid(`beforeSend threw (${errorMessage(err)}): ${item.kind} dropped`, [], true);
        return null;
      }
    };
    return { scrub: this.scrub, maxBytes: this.limits.maxBytes, filter: hook ? filter : undefined };
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
   * sealed and sent; in a browser with the page hand-off, at once with keepalive within the
   * page's 64 KiB budget (the page may not run another line), the session ended first on exit,
   * and what is left handed to the next page load (or saved to the app's persistence), to be
   * taken back if the page returns.
   */
  private background(exit: boolean): void {
    this.guard(undefined, () => {
      this.backgroundAt ??= Date.now();
      // The page or app may be gone before the answer: keepalive lets small requests finish.
      this.lanes.keepalive = true;
      void this.sendPendingCrashes();
      const page = this.page;
      if (!page) {
        void this.flush();
        this.store.schedule();
        return;
      }
      if (exit && this.session) {
        this.endedByExit = true;
        void this.endCurrent();
      } else {
        this.sealEvents();
        this.sealRequests();
      }
      page.leave(exit);
    });
  }

  private foreground(): void {
    this.guard(undefined, () => {
      this.lanes.keepalive = false;
      if (this.backgroundAt !== undefined) this.page?.back();
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

  private sealEvents(): void {
    if (this.session) this.enqueue(...sealEvents(this.session, this.limits));
  }

  private sealRequests(): void {
    if (this.session) this.enqueue(...sealRequests(this.session, this.limits));
  }

  private enqueue(...batches: Batch[]): void {
    if (batches.length === 0) return;
    this.queue.push(...batches);
    this.store.schedule();
  }

  private send(resume: boolean): Promise<void> {
    return this.lanes.send(resume);
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
