// Node / Electron main: the SDK's own requests must not keep a finishing process alive. A fetch
// in flight holds Node's event loop (its socket, its timers) until it is answered, so a script
// whose service accepts connections and never answers would wait out the whole per-attempt
// timeout before `beforeExit`, and so before the exit flush and its bound, could even begin.
// These requests go through node:http(s) on a private agent whose sockets are unref'd: the loop
// runs dry as soon as the app's own work is done, and the exit flush then holds the process for
// at most `exitFlushTimeoutMs`. (A private agent: unref'ing sockets of the global one would let
// the app's own requests be cut short.)
import type { FetchLike, ResponseLike } from './transport.js';

interface IncomingLike {
  statusCode?: number;
  headers: Record<string, string | string[] | undefined>;
  on(ev: 'data', fn: (chunk: Uint8Array) => void): unknown;
  on(ev: 'end' | 'error', fn: (e?: unknown) => void): unknown;
}
interface RequestLike {
  on(ev: 'socket', fn: (s: { ref?(): void; unref?(): void }) => void): unknown;
  on(ev: 'response', fn: (res: IncomingLike) => void): unknown;
  on(ev: 'error', fn: (e: unknown) => void): unknown;
  destroy(e?: unknown): void;
  end(data?: string | Uint8Array): void;
}
interface HttpModule {
  Agent: new (o: { keepAlive: boolean }) => unknown;
  request(url: string, o: { method?: string; headers?: Record<string, string>; agent?: unknown }): RequestLike;
}

const modules = new Map<string, Promise<{ mod: HttpModule; agent: unknown }>>();

function load(scheme: 'http' | 'https') {
  let m = modules.get(scheme);
  if (!m) {
    // A computed name, so that bundlers for browsers and React Native do not resolve it.
    const name = `node:${scheme}`;
    const loading = import(/* @vite-ignore */ /* webpackIgnore: true */ name);
    m = (loading as Promise<Partial<HttpModule> & { default?: HttpModule }>).then((x) => {
      const mod = (x.request ? x : x.default) as HttpModule;
      return { mod, agent: new mod.Agent({ keepAlive: true }) };
    });
    modules.set(scheme, m);
  }
  return m;
}

/** True where node:http can be used: a Node (or Electron main) process. */
export function canUseNodeHttp(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof p?.versions?.node === 'string';
}

/**
 * A fetch, as far as the SDK's transport uses one, whose requests hold the process only while
 * `held()` says so when they start (the app awaits a flush, a crash report, a shutdown).
 */
export const nodeFetch =
  (held: () => boolean): FetchLike =>
  async (input, init) => {
    const { mod, agent } = await load(input.startsWith('https:') ? 'https' : 'http');
    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw abortError();
    const body = init.body as string | Uint8Array | undefined;
    const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
    if (body !== undefined) {
      headers['content-length'] = String(typeof body === 'string' ? byteLength(body) : body.byteLength);
    }
    return new Promise<ResponseLike>((resolve, reject) => {
      const req = mod.request(input, { method: init.method ?? 'GET', headers, agent });
      const onAbort = () => req.destroy(abortError());
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => signal?.removeEventListener('abort', onAbort);
      // Pooled sockets are reused: each request decides for itself.
      req.on('socket', (s) => (held() ? s.ref?.() : s.unref?.()));
      req.on('error', (e) => {
        done();
        reject(e);
      });
      req.on('response', (res) => {
        const chunks: Uint8Array[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', (e) => {
          done();
          reject(e);
        });
        res.on('end', () => {
          done();
          const text = new TextDecoder().decode(concat(chunks));
          const h = res.headers;
          resolve({
            status: res.statusCode ?? 0,
            text: async () => text,
            headers: {
              get: (n: string) => {
                const v = h[n.toLowerCase()];
                return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
              },
            },
          });
        });
      });
      req.end(body);
    });
  };

function abortError(): Error {
  const e = new Error('This operation was aborted');
  e.name = 'AbortError';
  return e;
}

function byteLength(s: string): number {
  return new TextEncoder().encode(s).byteLength;
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
