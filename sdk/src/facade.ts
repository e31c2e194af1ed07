// The default-instance facade shared by the entry points: `init()` (of `@flightrec/sdk` or
// `@flightrec/sdk/core`) makes the default client, then these module functions use it. Each is
// its own export, so a bundle keeps the ones the app imports.
import type { FlightrecClient } from './client.js';
import type { AnyFetch } from './fetch.js';
import type { CrashOptions, MessageOptions } from './options.js';
import type { Breadcrumb, Level } from './scope.js';

let client: FlightrecClient | undefined;
let undo: (() => void) | undefined;
let warned = false;

/** The default client while it lives (what a second `init()` returns). */
export function living(): FlightrecClient | undefined {
  return client && !client.isClosed ? client : undefined;
}

/** Makes `c` the default client; `uninstall` is undone by `shutdown()`. */
export function adopt(c: FlightrecClient, uninstall?: () => void): void {
  // A client that shut itself down leaves what init() installed for it.
  undo?.();
  client = c;
  undo = uninstall;
}

function current(): FlightrecClient | undefined {
  if (!client && !warned) {
    warned = true;
    console.warn('flightrec: call init() before using the SDK; calls are ignored until then');
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
  const u = undo;
  client = undefined;
  undo = undefined;
  u?.();
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
    if (!w) {
      w = c.wrapFetch(base);
      wrappers.set(c, w);
    }
    return w(input, init);
  }) as F;
}

/** Records XMLHttpRequest calls for the default client; returns the undo function. */
export function instrumentXhr(xhr?: Parameters<FlightrecClient['instrumentXhr']>[0]): () => void {
  return current()?.instrumentXhr(xhr) ?? (() => {});
}
