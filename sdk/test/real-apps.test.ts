// The SDK in real apps (issue 23), in Node against the real service, counting what arrived
// through the export API: two clients and a crash, shutdown by signal or by the loop running
// dry, calls that must never throw, a burst over the queue bound, hostile arrays, scrubbing,
// and values the service would refuse.
import { spawn } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as sdk from '../src/index.ts';
import { FlightrecClient, type FlightrecError, type FlightrecOptions } from '../src/index.ts';
import { startTestServer, type TestServer } from '../../test/helpers/server.ts';
import { startFaultServer } from './helpers/faultServer.ts';
import { waitFor } from '../../test/helpers/wait.ts';

let s: TestServer;
let base: string;

beforeAll(async () => {
  s = await startTestServer({ RATE_LIMIT_EXPORT_PER_MIN: '100000', RATE_LIMIT_INGEST_PER_MIN: '100000' });
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await s?.close();
});

/** Every row of an export route, all pages, once the spools have loaded what was acknowledged. */
async function exported<T = Record<string, unknown>>(apiKey: string, route: string): Promise<T[]> {
  await s.settled();
  const rows: T[] = [];
  for (let page = 1; ; page++) {
    const r = await fetch(`${base}${route}${route.includes('?') ? '&' : '?'}limit=1000&page=${page}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(r.status, route).toBe(200);
    const body = (await r.json()) as { data: T[]; pages: number };
    rows.push(...body.data);
    if (page >= body.pages) return rows;
  }
}

interface Session {
  id: string;
  status: string;
}
const sessionsOf = (apiKey: string) => exported<Session>(apiKey, '/export/sessions');
const eventsOf = (apiKey: string, sid: string) =>
  exported<{ sequenceNumber: number; type: string; data: Record<string, unknown> }>(
    apiKey,
    `/export/events?sessionId=${sid}`,
  );
const networkOf = (apiKey: string) =>
  exported<{ sessionId: string; url: string; statusCode: number | null; error: string | null }>(
    apiKey,
    '/export/network',
  );

function client(apiKey: string, over: Partial<FlightrecOptions> = {}) {
  const errors: FlightrecError[] = [];
  const c = new FlightrecClient({
    apiKey,
    endpoint: base,
    device: { platform: 'linux' },
    captureCrashes: false,
    flushOnExit: false,
    onError: (e) => errors.push(e),
    ...over,
  });
  return { c, errors };
}

/** `ms`: wall time until the child exited; `killed`: it was still running after `killAfterMs`. */
interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  killed: boolean;
}

/** Runs helpers/exitApp.ts; `signal` is sent once it printed "ready". */
function runApp(env: Record<string, string>, signal?: NodeJS.Signals, killAfterMs = 60_000): Promise<Run> {
  const started = performance.now();
  const here = path.dirname(fileURLToPath(import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'helpers/exitApp.ts')], {
    env: { ...process.env, ENDPOINT: base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let sent = false;
  child.stdout.on('data', (d: Buffer) => {
    stdout += d;
    if (signal && !sent && stdout.includes('ready')) {
      sent = true;
      child.kill(signal);
    }
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d;
  });
  let killed = false;
  const bound = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, killAfterMs);
  return new Promise((resolve) =>
    child.on('exit', (code, sig) => {
      clearTimeout(bound);
      resolve({ code, signal: sig, stdout, stderr, ms: performance.now() - started, killed });
    }),
  );
}

/** An address that refuses connections: a port that was free a moment ago. */
async function closedPort(): Promise<string> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

const sessionOf = (r: Run) => /session (\S+)/.exec(r.stdout)?.[1] ?? '';

/** A service that accepts connections and never answers; `seen` counts the connections. */
async function hungService(): Promise<{ url: string; seen: () => number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let seen = 0;
  const srv = net.createServer((sock) => {
    seen++;
    sockets.add(sock);
    sock.on('error', () => {});
    sock.on('close', () => sockets.delete(sock));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen: () => seen,
    close: () =>
      new Promise<void>((r) => {
        for (const sock of sockets) sock.destroy();
        srv.close(() => r());
      }),
  };
}

describe('Node: a service that accepts and never answers does not hold a finishing script', () => {
  // The attempts have no timeout of their own (TIMEOUT_MS=0): before, a request in flight held
  // the event loop, so `beforeExit` and the bounded exit flush never came. The harness kills
  // the child after a minute, far beyond the 500 ms bound: "killed" is the failure.
  it('the loop running dry: the process ends after the bounded exit flush, with its own exit code', async () => {
    const hung = await hungService();
    try {
      const env = { MODE: 'natural', ENDPOINT: hung.url, TIMEOUT_MS: '0', EXIT_FLUSH_MS: '500' };
      const r = await runApp(env, undefined, 60_000);
      expect(r.killed).toBe(false);
      expect([r.code, r.signal]).toEqual([0, null]);
      expect(hung.seen()).toBeGreaterThan(0);
    } finally {
      await hung.close();
    }
  }, 90_000);

  it('SIGTERM: the process dies of the signal after the bounded flush', async () => {
    const hung = await hungService();
    try {
      const env = { MODE: 'serve', ENDPOINT: hung.url, TIMEOUT_MS: '0', EXIT_FLUSH_MS: '500' };
      const r = await runApp(env, 'SIGTERM', 60_000);
      expect(r.killed).toBe(false);
      expect(r.signal).toBe('SIGTERM');
    } finally {
      await hung.close();
    }
  }, 90_000);
});

describe('Node: two clients in one process keep the default crash behaviour', () => {
  it('an uncaught error is printed and the process exits with code 1, reported by both clients', async () => {
    const { apiKey } = await s.createProject('two clients crash');
    const r = await runApp({ MODE: 'crash', API_KEY: apiKey });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('TypeError: checkout exploded');
    const sessions = await sessionsOf(apiKey);
    expect(sessions.map((x) => x.status).sort()).toEqual(['crashed', 'crashed']);
    const crashes = await exported<{ occurrenceCount: number; isFatal: boolean }>(apiKey, '/export/crashes');
    expect(crashes).toMatchObject([{ occurrenceCount: 2, isFatal: true }]);
  }, 20_000);

  it('when the app has its own handler, the app decides the exit', async () => {
    const { apiKey } = await s.createProject('two clients own handler');
    const r = await runApp({ MODE: 'crash', API_KEY: apiKey, OWN_HANDLER: '1' });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('app handler saw checkout exploded');
    expect(r.stderr).not.toContain('checkout exploded');
  }, 20_000);
});

describe('Node: shutdown by signal or by the loop running dry sends everything, without changing the exit', () => {
  it('SIGTERM: the 354 events, 15 requests and the session end arrive; the process still dies of SIGTERM', async () => {
    const { apiKey } = await s.createProject('sigterm');
    const r = await runApp({ MODE: 'serve', API_KEY: apiKey, EVENTS: '354', REQUESTS: '15' }, 'SIGTERM');
    expect(r.signal).toBe('SIGTERM');
    const sid = sessionOf(r);
    expect((await eventsOf(apiKey, sid)).map((e) => e.sequenceNumber)).toEqual(
      Array.from({ length: 354 }, (_, i) => i),
    );
    expect((await networkOf(apiKey)).filter((n) => n.sessionId === sid)).toHaveLength(15);
    expect(await sessionsOf(apiKey)).toMatchObject([{ id: sid, status: 'completed' }]);
  }, 20_000);

  it('SIGINT: the same, and the process dies of SIGINT', async () => {
    const { apiKey } = await s.createProject('sigint');
    const r = await runApp({ MODE: 'serve', API_KEY: apiKey, EVENTS: '40', REQUESTS: '3' }, 'SIGINT');
    expect(r.signal).toBe('SIGINT');
    const sid = sessionOf(r);
    expect(await eventsOf(apiKey, sid)).toHaveLength(40);
    expect((await networkOf(apiKey)).filter((n) => n.sessionId === sid)).toHaveLength(3);
    expect(await sessionsOf(apiKey)).toMatchObject([{ id: sid, status: 'completed' }]);
  }, 20_000);

  it("SIGTERM with the app's own handler: the app's exit code stands, and the data still arrives", async () => {
    const { apiKey } = await s.createProject('sigterm own handler');
    const r = await runApp({ MODE: 'serve', API_KEY: apiKey, EVENTS: '25', OWN_HANDLER: '1' }, 'SIGTERM');
    expect([r.code, r.signal]).toEqual([0, null]);
    expect(r.stdout).toContain('app handler saw SIGTERM');
    expect(await eventsOf(apiKey, sessionOf(r))).toHaveLength(25);
  }, 20_000);

  it('beforeExit: a script that just ends sends its buffer and ends the session; exit code 0', async () => {
    const { apiKey } = await s.createProject('before exit');
    const r = await runApp({ MODE: 'natural', API_KEY: apiKey, EVENTS: '120', REQUESTS: '4' });
    expect([r.code, r.signal]).toEqual([0, null]);
    const sid = sessionOf(r);
    expect(await eventsOf(apiKey, sid)).toHaveLength(120);
    expect((await networkOf(apiKey)).filter((n) => n.sessionId === sid)).toHaveLength(4);
    expect(await sessionsOf(apiKey)).toMatchObject([{ id: sid, status: 'completed' }]);
  }, 20_000);
});

// A script (a CLI, a serverless function) that just ends while the service cannot be reached:
// without the cut it waited out the running retry cycle (2 + 4 + 8 s at the contract's delays)
// before `beforeExit` even came. The child is killed at 12 s, short of the 14 s of a cycle and far
// from the ~1 s it needs on a quiet machine: `killed` tells a hang, and no test measures a speed.
describe('Node: a script that just ends with the service unreachable exits without waiting out the retry cycle', () => {
  it('refused connections: the process ends with code 0 well before a retry cycle could run out', async () => {
    const r = await runApp({ MODE: 'natural', ENDPOINT: await closedPort(), EVENTS: '5' }, undefined, 12_000);
    expect(r.killed, r.stdout + r.stderr).toBe(false);
    expect([r.code, r.signal]).toEqual([0, null]);
  }, 20_000);

  it('a service that answers 503: the wait is cut for one last attempt of the session start, then the process ends', async () => {
    const down = await startFaultServer();
    try {
      down.always('/ingest/session', { status: 503 });
      const r = await runApp({ MODE: 'natural', ENDPOINT: down.url, EVENTS: '5' }, undefined, 12_000);
      expect(r.killed, r.stdout + r.stderr).toBe(false);
      expect([r.code, r.signal]).toEqual([0, null]);
      // The first try (which, when still in flight as the script ends, is the last one), then at
      // most one last attempt at exit: no wait run out.
      expect(down.on('/ingest/session').length).toBeGreaterThanOrEqual(1);
      expect(down.on('/ingest/session').length).toBeLessThanOrEqual(2);
      expect(down.on('/ingest/events')).toHaveLength(0);
    } finally {
      await down.close();
    }
  }, 20_000);

  it('a top-level `await flush()` (ES module) settles at exit, so the exit code stays 0 (no unsettled await, 13)', async () => {
    const r = await runApp({ MODE: 'await-flush', ENDPOINT: await closedPort(), EVENTS: '5' }, undefined, 12_000);
    expect(r.killed, r.stdout + r.stderr).toBe(false);
    expect([r.code, r.signal]).toEqual([0, null]);
    expect(r.stdout).toContain('flushed');
  }, 20_000);
});

describe('calls never throw at the app', () => {
  const hostile = () =>
    Object.defineProperty({}, 'x', {
      enumerable: true,
      get() {
        throw new Error('getter x');
      },
    });

  it('trackTap / trackNetwork with throwing getters, null or nothing', async () => {
    const { apiKey } = await s.createProject('never throw');
    const { c, errors } = client(apiKey);
    c.startSession();
    expect(() => c.trackTap(hostile() as never)).not.toThrow();
    expect(() => c.trackTap(null as never)).not.toThrow();
    expect(() => c.trackTap(undefined as never)).not.toThrow();
    const net = Object.defineProperty({ method: 'GET', url: 'https://x/y', duration: 3 }, 'statusCode', {
      enumerable: true,
      get() {
        throw new Error('getter status');
      },
    });
    expect(c.trackNetwork(net as never)).toBe(0);
    expect(() => c.trackNetwork(null as never)).not.toThrow();
    const proxy = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        ownKeys() {
          throw new Error('trap');
        },
      },
    );
    expect(() => c.trackNetwork(proxy as never)).not.toThrow();
    expect(() => c.trackTap(proxy as never)).not.toThrow();
    expect(c.trackTap({ x: 1, y: 2 })).toBe(1);
    await c.shutdown();
    expect(errors.every((e) => e.kind === 'invalid')).toBe(true);
  });

  it('the constructor and init() with no apiKey, no endpoint or a throwing device getter', async () => {
    const errors: FlightrecError[] = [];
    const noKey = new FlightrecClient({ endpoint: base, onError: (e: FlightrecError) => errors.push(e) } as never);
    expect(noKey.startSession()).toBe('');
    expect(noKey.trackCustom('x')).toBeUndefined();
    expect(() => noKey.wrapFetch(fetch)).not.toThrow();
    await noKey.flush();
    await noKey.shutdown();
    expect(errors[0]).toMatchObject({ kind: 'usage', message: 'flightrec is disabled: apiKey is required' });
    expect(() => new FlightrecClient(undefined as never)).not.toThrow();
    expect(() => sdk.init({ apiKey: 'frk_x' } as never)).not.toThrow();
    await sdk.shutdown();

    const { apiKey } = await s.createProject('hostile options');
    const opts = Object.defineProperty(
      { apiKey, endpoint: base, captureCrashes: false, flushOnExit: false },
      'device',
      {
        enumerable: true,
        get() {
          throw new Error('device getter');
        },
      },
    );
    const c = sdk.init(opts as FlightrecOptions);
    const sid = sdk.startSession()!;
    const withBadField = new FlightrecClient({
      apiKey,
      endpoint: base,
      captureCrashes: false,
      flushOnExit: false,
      device: Object.defineProperty({ appVersion: '1.0' }, 'model', {
        enumerable: true,
        get() {
          throw new Error('model');
        },
      }) as never,
    });
    const sid2 = withBadField.startSession();
    await Promise.all([sdk.shutdown(), withBadField.shutdown()]);
    expect(c).toBeInstanceOf(FlightrecClient);
    expect((await sessionsOf(apiKey)).map((x) => x.id).sort()).toEqual([sid, sid2].sort());
  });

  it('an Error whose stack (or message) getter throws is still reported', async () => {
    const { apiKey } = await s.createProject('hostile error');
    const { c } = client(apiKey);
    c.startSession();
    const e = new TypeError('card declined');
    Object.defineProperty(e, 'stack', {
      get() {
        throw new Error('stack getter');
      },
    });
    await c.reportCrash(e, { isFatal: false });
    const worse = new Error('x');
    // stack first: replacing message first makes V8 format the lazy stack, which reads it
    Object.defineProperty(worse, 'stack', {
      get() {
        throw new Error('stack getter');
      },
    });
    Object.defineProperty(worse, 'message', {
      get() {
        throw new Error('message getter');
      },
    });
    await c.reportCrash(worse);
    await c.shutdown();
    const groups = await exported<{ message: string }>(apiKey, '/export/crashes');
    expect(groups.map((g) => g.message).sort()).toEqual(['Error', 'TypeError: card declined']);
  });
});

describe('a burst over maxQueueItems with a healthy service', () => {
  it('keeps the start of the session: the first events all arrive, the newest are dropped and counted', async () => {
    const { apiKey } = await s.createProject('burst');
    const { c, errors } = client(apiKey, { maxQueueItems: 1000 });
    const sid = c.startSession();
    for (let i = 0; i < 3000; i++) c.trackCustom('burst', { i });
    await c.shutdown();
    const seqs = (await eventsOf(apiKey, sid)).map((e) => e.sequenceNumber);
    expect(seqs.length).toBeGreaterThanOrEqual(1000);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i));
    expect(c.stats().dropped).toBe(3000 - seqs.length);
    expect(errors.filter((e) => e.kind === 'dropped').length).toBeGreaterThan(0);
  });

  it('a burst the network can follow loses nothing: several batches of a session are in flight at once', async () => {
    const { apiKey } = await s.createProject('paced burst');
    let inFlight = 0;
    let most = 0;
    const counting: typeof fetch = async (u, i) => {
      most = Math.max(most, ++inFlight);
      try {
        return await fetch(u, i);
      } finally {
        inFlight--;
      }
    };
    const { c } = client(apiKey, { maxQueueItems: 2000, fetch: counting as never });
    const sid = c.startSession();
    for (let i = 0; i < 5000; i++) {
      // Bursts of two full batches (500 events each): both are sealed at once, and a client that
      // sent one batch of a session at a time would hold the second back. A network that can
      // follow is one that has made room for the next burst before it comes: the test waits for
      // that room, however long this machine takes, rather than for a fixed pause.
      if (i % 1000 === 0) await waitFor('room for the next burst', () => c.stats().queuedItems <= 1000, 30_000, 10);
      c.trackCustom('burst', { i });
    }
    await c.shutdown({ timeoutMs: 30_000 });
    expect(c.stats().dropped).toBe(0);
    expect(await eventsOf(apiKey, sid)).toHaveLength(5000);
    expect(most).toBeGreaterThan(1);
  }, 40_000);
});

describe('values and URLs', () => {
  it('arrays and collections are size-checked before they are walked: new Array(1e8) drops its event at once', async () => {
    const { apiKey } = await s.createProject('huge array');
    const { c, errors } = client(apiKey);
    const sid = c.startSession();
    expect(c.trackCustom('huge', { list: new Array(1e8) })).toBeUndefined();
    expect(c.trackCustom('huge set', { s: new Set(Array.from({ length: 600_000 }, (_, i) => i)) })).toBeUndefined();
    expect(c.trackCustom('typed', { b: new Uint8Array(2e8) })).toBeUndefined();
    expect(c.trackCustom('fine', { list: new Array(3) })).toBe(0);
    await c.shutdown();
    expect(
      errors.filter((e) => e.kind === 'invalid' && e.dropped).map((e) => e.kind === 'invalid' && e.issues[0]),
    ).toEqual(Array(3).fill(expect.stringContaining('over the')));
    expect((await eventsOf(apiKey, sid)).map((e) => e.data)).toEqual([
      { name: 'fine', properties: { list: [null, null, null] } },
    ]);
  });

  it('scrubs credentials in the user part, emails in paths and values; scrubQueryParams adds to the defaults', async () => {
    const scrub = sdk.urlScrubber(['order_ref']);
    expect(scrub('https://alice:s3cret@api.example.com/v1?x=1')).toBe('https://[Filtered]@api.example.com/v1?x=1');
    expect(scrub('https://ghp_abcdef@github.com/org/repo.git')).toBe('https://[Filtered]@github.com/org/repo.git');
    expect(scrub('https://api.example.com/users/jane.doe@example.com/orders?order_ref=9&token=t&page=2')).toBe(
      'https://api.example.com/users/[Filtered]/orders?order_ref=[Filtered]&token=[Filtered]&page=2',
    );
    expect(scrub('/profile/jane%40example.com#tab')).toBe('/profile/[Filtered]#tab');
    expect(scrub('https://x.example/search?q=bob@example.org')).toBe('https://x.example/search?q=[Filtered]');
    expect(scrub('https://x.example/a@b/c')).toBe('https://x.example/a@b/c');

    const { apiKey } = await s.createProject('scrub');
    const { c } = client(apiKey, { scrubQueryParams: ['order_ref'] });
    const sid = c.startSession();
    c.trackNavigate('/users/jane@example.com/settings');
    c.trackNetwork({
      method: 'GET',
      url: 'https://u:p@api.example.com/u/jane@example.com?order_ref=1&access_token=a',
      statusCode: 200,
      duration: 5,
    });
    await c.shutdown();
    const rows = await networkOf(apiKey);
    expect(rows.map((r) => r.url)).toEqual([
      'https://[Filtered]@api.example.com/u/[Filtered]?order_ref=[Filtered]&access_token=[Filtered]',
    ]);
    expect((await eventsOf(apiKey, sid))[0]!.data).toEqual({ from: null, to: '/users/[Filtered]/settings' });
  });

  it('statusCode -1 is a connection error (no status, reported); a negative duration drops its item (reported)', async () => {
    const { apiKey } = await s.createProject('negative');
    const { c, errors } = client(apiKey);
    const sid = c.startSession();
    expect(c.trackNetwork({ method: 'GET', url: 'https://x.example/a', statusCode: -1, duration: 30 })).toBe(0);
    expect(
      c.trackNetwork({ method: 'GET', url: 'https://x.example/b', statusCode: 200, duration: -5 }),
    ).toBeUndefined();
    c.recordRequest({
      method: 'GET',
      url: 'https://x.example/c',
      statusCode: -1,
      duration: 7,
      error: 'ECONNREFUSED',
      timestamp: Date.now(),
    });
    c.recordRequest({
      method: 'GET',
      url: 'https://x.example/d',
      statusCode: 200,
      duration: -1,
      error: null,
      timestamp: Date.now(),
    });
    await c.shutdown();
    const rows = await networkOf(apiKey);
    expect(rows.map((r) => [r.url, r.statusCode ?? null, r.error]).sort()).toEqual([
      ['https://x.example/a', null, 'connection error'],
      ['https://x.example/c', null, 'ECONNREFUSED'],
    ]);
    expect((await eventsOf(apiKey, sid)).map((e) => e.sequenceNumber)).toEqual([0]);
    const reported = errors.flatMap((e) => (e.kind === 'invalid' ? [[e.dropped, e.issues.join(';')]] : []));
    expect(reported).toEqual([
      [false, expect.stringContaining('/statusCode: -1 is not an HTTP status')],
      [true, expect.stringContaining('/duration: -5 is negative')],
      [false, expect.stringContaining('/statusCode: -1 is not an HTTP status')],
      [true, expect.stringContaining('/duration: -1 is negative')],
    ]);
    expect((await sessionsOf(apiKey))[0]).toMatchObject({ hasNetworkErrors: true });
  });
});
