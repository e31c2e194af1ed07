import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as realSleep } from 'node:timers/promises';
import zlib from 'node:zlib';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The body as the service would read it: inflated when it came gzipped. */
  body: string;
  /** The bytes on the wire. */
  raw: Buffer;
  /** Date.now() on arrival: the fake clock when the test fakes Date. */
  at: number;
}

/** A scripted answer; 'reset' destroys the connection without a response. */
export type Reply = { status: number; headers?: Record<string, string>; body?: unknown } | 'reset';

/**
 * A stand-in for the service that answers from a script: replies queued per path are used
 * first, in order; then 201 (200 for session end) with the contract's body.
 */
export interface FaultServer {
  url: string;
  received: Received[];
  /** Queues replies for the next requests to `path`. */
  script(path: string, ...replies: Reply[]): void;
  /** Answers every request to `path` with `reply` until cleared (`undefined`). */
  always(path: string, reply: Reply | undefined): void;
  on(path: string): Received[];
  waitFor(count: number, path?: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startFaultServer(): Promise<FaultServer> {
  const received: Received[] = [];
  const queues = new Map<string, Reply[]>();
  const standing = new Map<string, Reply>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      const raw = Buffer.concat(chunks);
      const body = (req.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(raw) : raw).toString('utf8');
      received.push({ method: req.method ?? '', path, headers: req.headers, body, raw, at: Date.now() });
      const reply = queues.get(path)?.shift() ?? standing.get(path) ?? defaultReply(path, body);
      if (reply === 'reset') {
        req.socket.destroy();
        return;
      }
      const answer = JSON.stringify(
        reply.body ?? (reply.status < 300 ? { ok: true } : { error: `scripted ${reply.status}` }),
      );
      res.writeHead(reply.status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(answer),
        ...reply.headers,
      });
      res.end(answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const on = (path: string) => received.filter((r) => r.path === path);
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    script(path, ...replies) {
      queues.set(path, [...(queues.get(path) ?? []), ...replies]);
    },
    always(path, reply) {
      if (reply === undefined) standing.delete(path);
      else standing.set(path, reply);
    },
    on,
    async waitFor(count, path, timeoutMs = 5000) {
      await until(
        () => (path ? on(path).length : received.length) >= count,
        `${count} requests${path ? ` to ${path}` : ''}`,
        timeoutMs,
      );
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function defaultReply(path: string, body: string): Reply {
  if (path === '/ingest/session/end') return { status: 200 };
  const j = safeParse(body) as { events?: unknown[]; requests?: unknown[] } | undefined;
  const count = j?.events?.length ?? j?.requests?.length;
  return { status: 201, body: count === undefined ? { ok: true } : { ok: true, count } };
}

function safeParse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** Polls in real time (unaffected by fake timers). */
export async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await realSleep(2);
  }
}

/** Real-time pause, e.g. to let I/O that should not happen have its chance to happen. */
export const realPause = (ms = 50) => realSleep(ms);
