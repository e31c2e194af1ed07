// Automatic recording of an app's HTTP calls: by wrapping a fetch function, or by patching
// XMLHttpRequest (what axios and React Native's own fetch use underneath).

import { networkErrorText } from './transport.js';
import type { NetworkRequest } from './types.js';

export type AnyFetch = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/**
 * A request the wrapper saw: a network-request entry without its id (given when it is queued).
 * `duration` runs until the response headers arrived (the body is the app's to read, not timed);
 * `timestamp` is when the request started.
 */
export type RecordedRequest = Omit<NetworkRequest, 'id' | 'error'> & { error: string | null };

export interface InstrumentOptions {
  /** Requests for which this returns true pass through unrecorded (the SDK's own calls). */
  ignore(url: string): boolean;
  record(r: RecordedRequest, context: unknown): void;
  /** Taken when the request starts and handed back to `record` (the session it belongs to). */
  context?(): unknown;
}

/**
 * Returns a fetch with the same behaviour as `fetchImpl` that reports each call's method, url,
 * status, duration, sizes (where known without reading a body) and error. Failures are
 * recorded and rethrown unchanged.
 */
export function instrumentFetch(fetchImpl: AnyFetch, opts: InstrumentOptions): AnyFetch {
  return async function flightrecFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const { method, url } = describe(input, init);
    if (opts.ignore(url)) return fetchImpl(input, init);
    const context = opts.context?.();
    const timestamp = Date.now();
    const requestSize = sizeOfRequest(input, init);
    const done = (r: Partial<RecordedRequest> & { error: string | null }) => {
      try {
        opts.record(
          {
            method,
            url,
            duration: Math.max(0, Date.now() - timestamp),
            timestamp,
            ...withoutUndefined({ requestSize }),
            ...r,
          },
          context,
        );
      } catch {
        // recording must never change what the app sees
      }
    };
    let res: Response;
    try {
      res = await fetchImpl(input, init);
    } catch (err) {
      done({ error: networkErrorText(err) });
      throw err;
    }
    const responseSize = contentLength(res.headers);
    done({ statusCode: res.status, error: null, ...withoutUndefined({ responseSize }) });
    return res;
  };
}

function describe(input: RequestInfo | URL, init?: RequestInit): { method: string; url: string } {
  const isRequest = typeof Request !== 'undefined' && input instanceof Request;
  const raw = isRequest ? (input as Request).url : String(input);
  const method = (init?.method ?? (isRequest ? (input as Request).method : 'GET')).toUpperCase();
  return { method, url: absolute(raw) };
}

/** Resolves a relative URL against the page's location where there is one (browsers). */
function absolute(url: string): string {
  const base = (globalThis as { location?: { href?: string } }).location?.href;
  try {
    return new URL(url, base).toString();
  } catch {
    return url;
  }
}

function sizeOfRequest(input: RequestInfo | URL, init?: RequestInit): number | undefined {
  try {
    return measureRequest(input, init);
  } catch {
    return undefined; // a platform without Headers/TextEncoder: size unknown, request still recorded
  }
}

function measureRequest(input: RequestInfo | URL, init?: RequestInit): number | undefined {
  const headers =
    init?.headers ?? (typeof Request !== 'undefined' && input instanceof Request ? input.headers : undefined);
  const declared = headers ? contentLength(new Headers(headers)) : undefined;
  if (declared !== undefined) return declared;
  const body = init?.body;
  if (body == null) return undefined;
  if (typeof body === 'string') return new TextEncoder().encode(body).byteLength;
  if (body instanceof URLSearchParams) return new TextEncoder().encode(body.toString()).byteLength;
  if (body instanceof ArrayBuffer) return body.byteLength;
  if (ArrayBuffer.isView(body)) return body.byteLength;
  if (typeof Blob !== 'undefined' && body instanceof Blob) return body.size;
  return undefined; // FormData, streams: unknown without consuming them
}

function contentLength(headers: Headers): number | undefined {
  const v = headers.get('content-length');
  if (v === null || !/^\d+$/.test(v.trim())) return undefined;
  return Number(v);
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The part of XMLHttpRequest the recorder touches. */
interface XhrLike {
  status: number;
  addEventListener(type: string, fn: (e?: unknown) => void): void;
  getResponseHeader(name: string): string | null;
}

interface XhrClass {
  prototype: { open: (...a: unknown[]) => void; send: (body?: unknown) => void };
}

/**
 * Patches `xhr` (default: the global XMLHttpRequest) so every request is recorded like the fetch
 * wrapper's: method, absolute url, status, duration until the load ended, sizes and the failure
 * (`ETIMEDOUT` on timeout, `AbortError` on abort, `network error` otherwise: XHR says no more).
 * Returns a function that restores the original methods. A no-op where there is no XHR.
 */
export function instrumentXhr(opts: InstrumentOptions, xhr?: XhrClass): () => void {
  const cls = xhr ?? (globalThis as { XMLHttpRequest?: XhrClass }).XMLHttpRequest;
  const proto = cls?.prototype;
  if (!proto || typeof proto.open !== 'function' || typeof proto.send !== 'function') return () => {};
  const { open, send } = proto;
  // What open() was told, per request, for send() to record.
  const opened = new WeakMap<XhrLike, XhrInfo>();
  proto.open = function (this: XhrLike, ...args: unknown[]) {
    try {
      opened.set(this, { method: String(args[0] ?? 'GET').toUpperCase(), url: absolute(String(args[1])) });
    } catch {
      // recording must never change what the app sees
    }
    return open.apply(this, args);
  };
  proto.send = function (this: XhrLike, body?: unknown) {
    try {
      watch(this, opened.get(this), body, opts);
    } catch {
      // as above
    }
    return send.call(this, body);
  };
  return () => {
    // Only undo our own patch: someone may have wrapped ours since.
    if (proto.send !== send) proto.send = send;
    if (proto.open !== open) proto.open = open;
  };
}

interface XhrInfo {
  method: string;
  url: string;
}

function watch(x: XhrLike, info: XhrInfo | undefined, body: unknown, opts: InstrumentOptions): void {
  if (!info || opts.ignore(info.url)) return;
  const context = opts.context?.();
  const timestamp = Date.now();
  const requestSize = sizeOfBody(body);
  let failure: string | null = null;
  x.addEventListener('error', () => {
    failure = 'network error';
  });
  x.addEventListener('timeout', () => {
    failure = 'ETIMEDOUT: XMLHttpRequest timed out';
  });
  x.addEventListener('abort', () => {
    failure = 'AbortError: XMLHttpRequest aborted';
  });
  x.addEventListener('loadend', () => {
    try {
      const failed = failure !== null || !x.status;
      const responseSize = failed
        ? undefined
        : contentLength({ get: (n: string) => x.getResponseHeader(n) } as Headers);
      opts.record(
        {
          method: info.method,
          url: info.url,
          duration: Math.max(0, Date.now() - timestamp),
          timestamp,
          ...withoutUndefined({ requestSize, responseSize }),
          ...(failed ? { error: failure ?? 'network error' } : { statusCode: x.status, error: null }),
        },
        context,
      );
    } catch {
      // as above
    }
  });
}

function sizeOfBody(body: unknown): number | undefined {
  try {
    return measureRequest('', { body: body as BodyInit });
  } catch {
    return undefined;
  }
}
