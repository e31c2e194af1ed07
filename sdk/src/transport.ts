// Sends one request body to the service with the contract's retry policy. No state beyond its
// options, so the bench and the reliability tests can drive the service exactly as the SDK does.
import { utf8Length } from './sanitize.js';

/** What the transport reads of an answer (a fetch `Response` has it). */
export interface ResponseLike {
  status: number;
  text(): Promise<string>;
  headers: { get(name: string): string | null };
}
export type FetchLike = (input: string, init: RequestInit) => Promise<ResponseLike>;

/** The contract: 429 and 5xx retried up to 3 times, waiting 2 s, 4 s and 8 s. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [2000, 4000, 8000];
/** The contract's backoff cap; a longer Retry-After is clamped to it. */
export const MAX_RETRY_AFTER_MS = 60_000;
export const DEFAULT_TIMEOUT_MS = 30_000;

export interface TransportOptions {
  /** Base URL of the service, e.g. `https://telemetry.example.com`. */
  endpoint: string;
  apiKey: string;
  fetch?: FetchLike;
  /** Waits before each retry; its length is the number of retries. */
  retryDelaysMs?: readonly number[];
  maxRetryAfterMs?: number;
  /** Per-attempt timeout; 0 disables it. A timed-out attempt counts as a network failure. */
  timeoutMs?: number;
  /** Called before each wait, e.g. for logging. */
  onRetry?: (info: RetryInfo) => void;
  /**
   * Gzip bodies of at least `compressMinBytes` (default 1024) where the runtime can
   * (`CompressionStream`, else `node:zlib`); sent as is where it cannot. Default false.
   */
  compress?: boolean;
  compressMinBytes?: number;
  /**
   * Node: retry waits and attempt timers do not keep the process alive by themselves. Only for a caller that takes
   * over when the process would end (the client's exit flush on `beforeExit`, which cuts the
   * waits): without one, an awaited send would be dropped with the process. Default false.
   */
  unrefWaits?: boolean;
}

export interface SendOptions {
  /**
   * Lets the request outlive the page (pagehide); only used for bodies under the browsers' 64 KiB
   * cap. Such bodies are sent uncompressed.
   */
  keepalive?: boolean;
  /**
   * Aborted when the app is on its way out: a retry wait under way ends at once, and the attempt
   * then made (or the one in flight) is the last, so leaving costs one attempt, not a cycle.
   */
  last?: AbortSignal;
}

/**
 * Browsers refuse keepalive requests once the bodies of those in flight add up to more than
 * 64 KiB (per page): the budget, with room for what the SDK does not see.
 */
export const KEEPALIVE_MAX_BYTES = 60_000;

export interface RetryInfo {
  path: string;
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
  status?: number;
  error: string;
}

export type SendResult =
  | { outcome: 'sent'; status: number; attempts: number; body: string }
  /** A status the contract says not to retry (4xx other than 429, or any other non-2xx). */
  | { outcome: 'rejected'; status: number; attempts: number; error: string; body: string }
  /** Retryable failures on every attempt. */
  | { outcome: 'failed'; status?: number; attempts: number; error: string }
  | { outcome: 'aborted'; attempts: number };

export type StatusClass = 'ok' | 'retry' | 'reject';

export function classifyStatus(status: number): StatusClass {
  if (status >= 200 && status < 300) return 'ok';
  if (status === 429 || (status >= 500 && status <= 599)) return 'retry';
  return 'reject';
}

/** `Retry-After` as milliseconds: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value == null) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The wait before a retry: the schedule's, or Retry-After when that is longer (up to the cap). */
export function retryDelay(scheduledMs: number, retryAfterMs: number | undefined, capMs = MAX_RETRY_AFTER_MS): number {
  return Math.max(scheduledMs, Math.min(retryAfterMs ?? 0, capMs));
}

export function joinUrl(endpoint: string, path: string): string {
  return endpoint.replace(/\/+$/, '') + path;
}

export class Transport {
  readonly endpoint: string;
  private readonly fetchImpl: FetchLike;
  private readonly delays: readonly number[];
  private keepaliveBytes = 0;

  constructor(private readonly opts: TransportOptions) {
    this.endpoint = opts.endpoint.replace(/\/+$/, '');
    const f = opts.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (!f) throw new Error('flightrec: no fetch on this platform; pass one as the `fetch` option');
    // Bound, so a platform fetch is not called with `this` set to the transport.
    this.fetchImpl = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.delays = opts.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  }

  /** Bytes of keepalive bodies in flight: what is left of the page's 64 KiB is the rest. */
  get keepaliveInFlight(): number {
    return this.keepaliveBytes;
  }

  /**
   * POSTs `body` (already serialised, sent byte-identical on every attempt) to `path`, retrying
   * as the contract says. Never throws; `signal` cancels a wait or an attempt in flight.
   */
  async send(path: string, body: string, signal?: AbortSignal, opts: SendOptions = {}): Promise<SendResult> {
    const url = joinUrl(this.endpoint, path);
    // Compressed once, so every attempt carries the same bytes. Not on the way out of a page:
    // the request must start before the page is torn down, and compression takes turns.
    const payload = opts.keepalive ? { data: body, gzip: false } : await this.encode(body);
    const size = byteSize(payload.data);
    const keepalive = opts.keepalive === true && this.keepaliveBytes + size <= KEEPALIVE_MAX_BYTES;
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) return { outcome: 'aborted', attempts: attempt - 1 };
      if (keepalive) this.keepaliveBytes += size;
      const r = await this.attempt(url, payload, keepalive, signal).finally(() => {
        if (keepalive) this.keepaliveBytes -= size;
      });
      if (r.kind === 'aborted') return { outcome: 'aborted', attempts: attempt };
      if (r.kind === 'response') {
        const cls = classifyStatus(r.status);
        if (cls === 'ok') return { outcome: 'sent', status: r.status, attempts: attempt, body: r.text };
        if (cls === 'reject')
          return {
            outcome: 'rejected',
            status: r.status,
            attempts: attempt,
            error: errorText(r.status, r.text),
            body: r.text,
          };
      }
      const status = r.kind === 'response' ? r.status : undefined;
      const error = r.kind === 'response' ? errorText(r.status, r.text) : r.error;
      const scheduled = opts.last?.aborted ? undefined : this.delays[attempt - 1];
      if (scheduled === undefined) return { outcome: 'failed', status, attempts: attempt, error };
      const delayMs = retryDelay(
        scheduled,
        r.kind === 'response' ? r.retryAfterMs : undefined,
        this.opts.maxRetryAfterMs,
      );
      try {
        this.opts.onRetry?.({ path, retry: attempt, delayMs, status, error });
      } catch {
        // a logging hook must not break delivery
      }
      if ((await sleep(delayMs, signal, opts.last, this.opts.unrefWaits)) === 'aborted')
        return { outcome: 'aborted', attempts: attempt };
    }
  }

  private async encode(body: string): Promise<{ data: string | Uint8Array; gzip: boolean }> {
    if (!this.opts.compress || body.length < (this.opts.compressMinBytes ?? 1024)) return { data: body, gzip: false };
    const data = await gzip(body);
    return data ? { data, gzip: true } : { data: body, gzip: false };
  }

  private async attempt(
    url: string,
    payload: { data: string | Uint8Array; gzip: boolean },
    keepalive: boolean,
    outer?: AbortSignal,
  ): Promise<
    | { kind: 'response'; status: number; text: string; retryAfterMs?: number }
    | { kind: 'network'; error: string }
    | { kind: 'aborted' }
  > {
    const ctrl = new AbortController();
    const onOuterAbort = () => ctrl.abort();
    outer?.addEventListener('abort', onOuterAbort);
    let timedOut = false;
    const timeoutMs = this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            ctrl.abort();
          }, timeoutMs)
        : undefined;
    // Like the waits: the attempt's own timer must not hold a finishing process either.
    if (this.opts.unrefWaits) (timer as { unref?: () => void } | undefined)?.unref?.();
    try {
      const headers: Record<string, string> = {
        authorization: `Bearer ${this.opts.apiKey}`,
        'content-type': 'application/json',
      };
      if (payload.gzip) headers['content-encoding'] = 'gzip';
      const res = await this.fetchImpl(url, {
        method: 'POST',
        headers,
        body: payload.data as BodyInit,
        signal: ctrl.signal,
        ...(keepalive ? { keepalive } : {}),
      });
      // Read the body either way: it carries the error message, and it frees the connection.
      const text = await res.text().catch(() => '');
      return {
        kind: 'response',
        status: res.status,
        text,
        retryAfterMs: parseRetryAfter(res.headers.get('retry-after')),
      };
    } catch (err) {
      if (outer?.aborted) return { kind: 'aborted' };
      return { kind: 'network', error: timedOut ? `timed out after ${timeoutMs} ms` : errorMessage(err) };
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    }
  }
}

function byteSize(data: string | Uint8Array): number {
  return typeof data === 'string' ? utf8Length(data) : data.byteLength;
}

let zlibGzip: ((s: string) => Uint8Array) | null | undefined;

/**
 * Gzip of `s`, or undefined when the runtime has no compressor (React Native). CompressionStream
 * first (browsers, Node 18+, Deno, Bun); then node:zlib, imported by a computed name so that
 * bundlers for browsers and React Native do not try to resolve it.
 */
export async function gzip(s: string): Promise<Uint8Array | undefined> {
  try {
    const CS = (globalThis as { CompressionStream?: new (f: string) => TransformStream<Uint8Array, Uint8Array> })
      .CompressionStream;
    if (typeof CS === 'function' && typeof Blob === 'function' && typeof Response === 'function') {
      const stream = new Blob([s]).stream().pipeThrough(new CS('gzip'));
      return new Uint8Array(await new Response(stream).arrayBuffer());
    }
    if (zlibGzip === undefined) {
      zlibGzip = null;
      const proc = (globalThis as { process?: { versions?: { node?: string } } }).process;
      if (proc?.versions?.node) {
        const name = 'node:' + 'zlib';
        const z = (await import(/* @vite-ignore */ /* webpackIgnore: true */ name)) as {
          gzipSync(s: string): Uint8Array;
        };
        zlibGzip = (x) => z.gzipSync(x);
      }
    }
    return zlibGzip ? zlibGzip(s) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Resolves 'slept' after `ms`; at once 'aborted' when `signal` aborts, or 'woken' when `wake`
 * does. `unref`: the timer does not keep a Node process alive.
 */
function sleep(
  ms: number,
  signal?: AbortSignal,
  wake?: AbortSignal,
  unref = false,
): Promise<'slept' | 'aborted' | 'woken'> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve('aborted');
    if (wake?.aborted) return resolve('woken');
    const end = (why: 'slept' | 'aborted' | 'woken') => {
      clearTimeout(t);
      signal?.removeEventListener('abort', onAbort);
      wake?.removeEventListener('abort', onWake);
      resolve(why);
    };
    const onAbort = () => end('aborted');
    const onWake = () => end('woken');
    const t = setTimeout(() => end('slept'), ms);
    if (unref) (t as { unref?: () => void }).unref?.();
    signal?.addEventListener('abort', onAbort, { once: true });
    wake?.addEventListener('abort', onWake, { once: true });
  });
}

function errorText(status: number, text: string): string {
  try {
    const j = JSON.parse(text) as { error?: unknown };
    if (typeof j?.error === 'string') return `${status} ${j.error}`;
  } catch {
    // not JSON: fall through to the raw text
  }
  return `${status} ${text.slice(0, 200)}`.trim();
}

export function errorMessage(err: unknown): string {
  return networkErrorText(err);
}

/** undici's names for what the OS calls a reset or a timeout, so records read the same everywhere. */
const CODE_ALIASES: Record<string, string> = {
  UND_ERR_SOCKET: 'ECONNRESET',
  UND_ERR_CLOSED: 'ECONNRESET',
  UND_ERR_CONNECT_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_HEADERS_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_BODY_TIMEOUT: 'ETIMEDOUT',
};

function codeOf(x: unknown): string | undefined {
  const o = x as { code?: unknown; errors?: unknown[] } | null | undefined;
  const code = typeof o?.code === 'string' ? o.code : Array.isArray(o?.errors) ? codeOf(o.errors[0]) : undefined;
  return code === undefined ? undefined : (CODE_ALIASES[code] ?? code);
}

/**
 * A failed request as `CODE: detail`, so that a refused connection (ECONNREFUSED), a reset
 * (ECONNRESET), a DNS failure (ENOTFOUND), a timeout (ETIMEDOUT) and an abort (AbortError) are
 * told apart; fetch itself says "fetch failed" for all of them and keeps the reason in `cause`.
 */
export function networkErrorText(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const e = err as { name?: unknown; message?: unknown; cause?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (e.name === 'AbortError') return `AbortError: ${message}`;
  if (e.name === 'TimeoutError') return `ETIMEDOUT: ${message}`;
  const code = codeOf(e.cause) ?? codeOf(e);
  const cause = e.cause instanceof Error ? e.cause.message : undefined;
  if (code) return `${code}: ${cause ?? message}`;
  return cause ? `${message}: ${cause}` : message;
}
