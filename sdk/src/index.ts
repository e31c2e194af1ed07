// The default-instance facade: `init()` once, then the module functions. Apps that need several
// clients (or tests) use `FlightrecClient` directly.
import { FlightrecClient, type CrashOptions, type FlightrecOptions } from './client.js';
import type { AnyFetch } from './fetch.js';

export { FlightrecClient, describeError, type ClientStats, type CrashOptions, type FlightrecOptions } from './client.js';
export * from './types.js';
export * from './transport.js';
export * from './batcher.js';
export * from './persistence.js';
export { instrumentFetch as instrumentFetchWith, instrumentXhr as instrumentXhrWith, type AnyFetch, type InstrumentOptions, type RecordedRequest } from './fetch.js';
export { DEFAULT_SCRUBBED_PARAMS, FILTERED, jsonSafe, platformOf, urlScrubber, type ScrubParams } from './sanitize.js';
export { detectDevice, installCrashHandlers, reactNativeDevice, watchLifecycle, type AppStateLike } from './runtime.js';
export { uuidv4 } from './uuid.js';
export { SDK_VERSION } from './version.js';

let client: FlightrecClient | undefined;
let warned = false;

function current(): FlightrecClient | undefined {
  if (!client && !warned) {
    warned = true;
    console.warn('flightrec: call init() before using the SDK; calls are ignored until then');
  }
  return client;
}

/**
 * Creates the default client. A second call shuts the previous one down first. Unless
 * `captureCrashes: false`, it also reports the app's uncaught errors (see the docs per runtime).
 */
export function init(opts: FlightrecOptions): FlightrecClient {
  if (client) void client.shutdown();
  client = new FlightrecClient(opts);
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

/** Shuts the default client down and forgets it. */
export async function shutdown(opts?: { timeoutMs?: number }): Promise<void> {
  const c = client;
  client = undefined;
  await c?.shutdown(opts);
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
