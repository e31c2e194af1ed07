// The default entry (`@flightrec/sdk`): everything, for every runtime. The default-instance
// facade: `init()` once, then the module functions. Apps that need several clients (or tests)
// use `FlightrecClient` directly. Smaller bundles: `@flightrec/sdk/core` (the client without
// Node's hooks or automatic breadcrumbs), `@flightrec/sdk/browser` and `@flightrec/sdk/node`.
import { installAutoBreadcrumbs, type AutoBreadcrumbOptions } from './autoBreadcrumbs.js';
import {
  FlightrecClient as CoreClient,
  type CrashOptions,
  type FlightrecOptions,
  type MessageOptions,
} from './client.js';
import { nodeHooks } from './node.js';
import type { AnyFetch } from './fetch.js';
import type { Breadcrumb, Level } from './scope.js';

export {
  describeError,
  type ClientStats,
  type CrashOptions,
  type FlightrecOptions,
  type MessageOptions,
} from './client.js';
export { nodeHooks, type NodeHooks } from './node.js';

/** The client, with Node's process hooks (crash, exit flush, requests that let a script end). */
export class FlightrecClient extends CoreClient {
  constructor(options: FlightrecOptions) {
    super(options, nodeHooks);
  }
}
export * from './types.js';
export * from './transport.js';
export * from './batcher.js';
export * from './persistence.js';
export {
  instrumentFetch as instrumentFetchWith,
  instrumentXhr as instrumentXhrWith,
  type AnyFetch,
  type InstrumentOptions,
  type RecordedRequest,
} from './fetch.js';
export { DEFAULT_SCRUBBED_PARAMS, FILTERED, jsonSafe, platformOf, urlScrubber, type ScrubParams } from './sanitize.js';
export { detectDevice, installCrashHandlers, reactNativeDevice, watchLifecycle, type AppStateLike } from './runtime.js';
export { uuidv4 } from './uuid.js';
export { installAutoBreadcrumbs, type AutoBreadcrumbOptions, type BreadcrumbSink } from './autoBreadcrumbs.js';
export { MAX_BREADCRUMBS, type Breadcrumb, type Level, type ReportContext } from './scope.js';
export { SDK_VERSION } from './version.js';

let client: FlightrecClient | undefined;
let undoBreadcrumbs: (() => void) | undefined;
let warned = false;

export interface InitOptions extends FlightrecOptions {
  /**
   * Breadcrumbs recorded without the app's help: console, clicks, navigations (History API
   * included) and fetch/XHR requests. Default true; false, or an object to leave parts out.
   */
  autoBreadcrumbs?: boolean | AutoBreadcrumbOptions;
}

function current(): FlightrecClient | undefined {
  if (!client && !warned) {
    warned = true;
    console.warn('flightrec: call init() before using the SDK; calls are ignored until then');
  }
  return client;
}

/**
 * Creates the default client. Unless `captureCrashes: false`, it also reports the app's
 * uncaught errors (see the docs per runtime), and unless `autoBreadcrumbs: false` it records
 * breadcrumbs. Called again while that client lives (hot module reload, React StrictMode's
 * double effects), it returns the same client, session and all, and ignores the new options;
 * `shutdown()` first to start over with other options.
 */
export function init(opts: InitOptions): FlightrecClient {
  if (client && !client.isClosed) return client;
  client = new FlightrecClient(opts);
  const auto = opts?.autoBreadcrumbs;
  if (auto !== false && !client.isClosed) {
    const c = client;
    const sink = {
      addBreadcrumb: (b: Partial<Breadcrumb>) => c.addBreadcrumb(b),
      isOwnUrl: (u: string) => c.isOwnUrl(u),
    };
    undoBreadcrumbs = installAutoBreadcrumbs(sink, typeof auto === 'object' ? auto : {});
  }
  return client;
}

export function getClient(): FlightrecClient | undefined {
  return client;
}

export function startSession(opts: { userId?: string } = {}): string | undefined {
  return current()?.startSession(opts);
}

export function trackNavigate(to: string, from?: string | null): number | undefined {
  return current()?.trackNavigate(to, from);
}

export function trackTap(tap: { x: number; y: number; target?: string }): number | undefined {
  return current()?.trackTap(tap);
}

export function trackCustom(name: string, properties?: Record<string, unknown>): number | undefined {
  return current()?.trackCustom(name, properties);
}

export function trackNetwork(r: Parameters<FlightrecClient['trackNetwork']>[0]): number | undefined {
  return current()?.trackNetwork(r);
}

export function reportCrash(error: unknown, opts?: CrashOptions): Promise<void> {
  return current()?.reportCrash(error, opts) ?? Promise.resolve();
}

export function endSession(): Promise<void> {
  return current()?.endSession() ?? Promise.resolve();
}

export function flush(): Promise<void> {
  return current()?.flush() ?? Promise.resolve();
}

/**
 * Shuts the default client down and forgets it: ends the session and sends what is queued,
 * for at most `timeoutMs` (default 10 s). An app whose own SIGTERM handler calls
 * `process.exit()` must `await shutdown()` before it: `process.exit` ends the process at once.
 */
export async function shutdown(opts?: { timeoutMs?: number }): Promise<void> {
  const c = client;
  client = undefined;
  undoBreadcrumbs?.();
  undoBreadcrumbs = undefined;
  await c?.shutdown(opts);
}

/** The user of what follows (a log-in does not split the session); null forgets it. */
export function setUser(user: { id?: string | number } | string | null): void {
  current()?.setUser(user);
}

export function setTag(key: string, value: string | number | boolean | null): void {
  current()?.setTag(key, value);
}

export function setTags(tags: Record<string, string | number | boolean | null>): void {
  current()?.setTags(tags);
}

export function setContext(name: string, context: Record<string, unknown> | null): void {
  current()?.setContext(name, context);
}

export function addBreadcrumb(b: Partial<Breadcrumb>): void {
  current()?.addBreadcrumb(b);
}

/** An error the app caught, reported as handled (level `error`). */
export function captureException(error: unknown, opts?: CrashOptions): Promise<void> {
  return current()?.captureException(error, opts) ?? Promise.resolve();
}

/** A handled report without an error: level `info` (default) or `warning`. */
export function captureMessage(message: string, level?: Level, opts?: MessageOptions): Promise<void> {
  return current()?.captureMessage(message, level, opts) ?? Promise.resolve();
}

/** Consent: false stops recording, sending and storing (and drops what is unsent); true resumes. */
export function setEnabled(enabled: boolean): void {
  current()?.setEnabled(enabled);
}

/**
 * Wraps a fetch (default: the platform's) so the default client records its requests. Calls
 * made before `init()` pass through unrecorded.
 */
export function instrumentFetch<F extends AnyFetch>(fetchImpl?: F): F {
  const base: AnyFetch = fetchImpl ?? ((input, init) => globalThis.fetch(input, init));
  // Resolved per call, so a wrapper made before init() starts recording once init() ran.
  const wrappers = new WeakMap<FlightrecClient, AnyFetch>();
  return ((input: RequestInfo | URL, init?: RequestInit) => {
    const c = client;
    if (!c) return base(input, init);
    let w = wrappers.get(c);
    if (!w) wrappers.set(c, (w = c.wrapFetch(base)));
    return w(input, init);
  }) as F;
}

/** Records XMLHttpRequest calls for the default client; returns the undo function. */
export function instrumentXhr(xhr?: Parameters<FlightrecClient['instrumentXhr']>[0]): () => void {
  return current()?.instrumentXhr(xhr) ?? (() => {});
}
