/**
 * The load generator, run as its own process (so its CPU is not the server's): `connections`
 * simulated apps, each on an undici pool connection with pipelining off, closed-loop by
 * default or paced to `rps` requests per second. Talks to its parent over IPC.
 */
import { Pool } from 'undici';
import { Client, Ids, parseMix, picker, type Body, type Kind } from './traffic.ts';
import { Transport, type FetchLike } from '../sdk/src/transport.ts';
import { Latencies } from './stats.ts';

export interface LoadConfig {
  url: string;
  apiKey: string;
  connections: number;
  seconds: number;
  mix: string;
  batchesPerSession: number;
  /** Paced mode: total requests per second across all connections; closed loop when absent. */
  rps?: number;
  /**
   * Seconds of load before the measured `seconds`, left out of every rate and latency (a fresh
   * process's JIT, the engine's first inserts): the figures are the steady state. Its bodies are
   * still in the acknowledged totals, which the exactly-once ledger counts.
   */
  warmupSeconds?: number;
}

interface RouteStats {
  requests: number;
  acked: number;
  attempts: number;
  events: number;
  networkRows: number;
  statuses: Record<string, number>;
  latency: Latencies;
}

export interface RouteResult extends Omit<RouteStats, 'latency'> {
  rps: number;
  eps: number;
  latency: ReturnType<Latencies['summary']>;
}

export interface LoadResult {
  /** The measured window (after any warm-up). */
  seconds: number;
  warmupSeconds: number;
  routes: Record<string, RouteResult>;
  /** The whole run's, warm-up included: what the store must hold. */
  ackedEvents: number;
  ackedNetworkRows: number;
  /** Rows in bodies that were never acknowledged (they may or may not be stored). */
  unackedEvents: number;
  unackedNetworkRows: number;
  eventsPerSecond: number;
  loadgenCpuPercent: number;
  /**
   * Paced runs: every route's latency by the second its response came, to tell a tail spread
   * over the run from a few slow seconds (a merge, a large insert, a slow minute of the host).
   */
  bySecond?: { second: number; n: number; p99: number; max: number }[];
  /** Paced runs with a warm-up: its latencies, left out of every figure above but shown. */
  warmup?: { n: number; p99: number; max: number };
}

/**
 * The SDK's own transport (contract retry policy: 429/5xx/network failures retried 3 times at
 * 2, 4 and 8 s or Retry-After, byte-identical bodies) over an undici keep-alive pool. The pool is
 * reached through a minimal fetch (status, headers, text: all the transport reads) because the
 * full WHATWG fetch costs the load generator more CPU than the bare-Fastify ceiling leaves it.
 * `observe` sees every attempt: its status (0 for a connection failure) and latency.
 */
function sdkTransport(
  pool: Pool,
  url: string,
  apiKey: string,
  observe: (status: number, ms: number) => void,
): Transport {
  const base = url.replace(/\/+$/, '');
  const poolFetch: FetchLike = async (input, init) => {
    const t0 = performance.now();
    try {
      const r = await pool.request({
        method: 'POST',
        path: input.slice(base.length),
        headers: init.headers as Record<string, string>,
        body: init.body as string,
        signal: init.signal ?? undefined,
      });
      const text = await r.body.text();
      observe(r.statusCode, performance.now() - t0);
      const headers = r.headers;
      return {
        status: r.statusCode,
        headers: {
          get: (name: string) => {
            const v = headers[name.toLowerCase()];
            return v === undefined ? null : String(v);
          },
        },
        text: async () => text,
      } as unknown as Response;
    } catch (err) {
      observe(0, performance.now() - t0);
      throw err;
    }
  };
  return new Transport({ endpoint: base, apiKey, fetch: poolFetch });
}

export async function runLoad(
  cfg: LoadConfig,
  progress: (p: { elapsed: number; requests: number; events: number; errors: number }) => void,
): Promise<LoadResult> {
  const pool = new Pool(cfg.url, { connections: cfg.connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const pick = picker(parseMix(cfg.mix));
  const ids = new Ids();
  const stats = new Map<Kind, RouteStats>();
  const route = (k: Kind) => {
    let s = stats.get(k);
    if (!s) {
      s = { requests: 0, acked: 0, attempts: 0, events: 0, networkRows: 0, statuses: {}, latency: new Latencies() };
      stats.set(k, s);
    }
    return s;
  };
  let unackedEvents = 0;
  let unackedNetworkRows = 0;
  let totalRequests = 0;
  let totalEvents = 0;
  let totalErrors = 0;

  let cpu0 = process.cpuUsage();
  const start = performance.now();
  const warmupSeconds = cfg.warmupSeconds ?? 0;
  const measureFrom = start + warmupSeconds * 1000;
  const deadline = measureFrom + cfg.seconds * 1000;
  const ledger = { events: 0, networkRows: 0 };
  let measuring = warmupSeconds === 0;
  const warmedUp =
    warmupSeconds > 0
      ? setTimeout(() => {
          // Every rate and latency restarts here; the ledger goes on.
          stats.clear();
          totalRequests = 0;
          totalEvents = 0;
          totalErrors = 0;
          cpu0 = process.cpuUsage();
          measuring = true;
        }, warmupSeconds * 1000)
      : undefined;
  let slot = 0;
  const bySecond: Latencies[] = [];
  const warmupLatency = new Latencies();

  async function send(b: Body): Promise<boolean> {
    const s = route(b.kind);
    let lateness = 0;
    if (cfg.rps) {
      const due = start + (slot++ * 1000) / cfg.rps;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      else lateness = -wait; // behind schedule: the wait counts as latency (no coordinated omission)
    }
    let first = true;
    const transport = sdkTransport(pool, cfg.url, cfg.apiKey, (status, ms) => {
      s.attempts++;
      const latency = first ? ms + lateness : ms;
      s.latency.add(latency);
      if (cfg.rps && measuring) {
        const second = Math.floor((performance.now() - measureFrom) / 1000);
        bySecond[second] ??= new Latencies();
        bySecond[second].add(latency);
      } else if (cfg.rps) warmupLatency.add(latency);
      first = false;
      if (status < 200 || status >= 300) {
        s.statuses[status] = (s.statuses[status] ?? 0) + 1;
        totalErrors++;
      }
    });
    const out = await transport.send(b.path, b.json);
    s.requests++;
    totalRequests++;
    const ok = out.outcome === 'sent';
    if (ok) {
      ledger.events += b.events;
      ledger.networkRows += b.networkRows;
      s.acked++;
      s.events += b.events;
      s.networkRows += b.networkRows;
      totalEvents += b.events;
    } else {
      unackedEvents += b.events;
      unackedNetworkRows += b.networkRows;
    }
    return ok;
  }

  async function app() {
    const c = new Client(ids, cfg.batchesPerSession);
    let haveSession = false;
    while (performance.now() < deadline) {
      if (!haveSession || c.needsSession()) {
        haveSession = await send(c.sessionStart());
        continue;
      }
      const k = pick();
      await send(k === 'network200' ? c.network() : k === 'crash' ? c.crash() : c.events(k));
    }
  }

  const ticker = setInterval(
    () =>
      progress({
        elapsed: Math.max(0, (performance.now() - measureFrom) / 1000),
        requests: totalRequests,
        events: totalEvents,
        errors: totalErrors,
      }),
    1000,
  );
  await Promise.all(Array.from({ length: cfg.connections }, app));
  clearInterval(ticker);
  clearTimeout(warmedUp);
  const seconds = (performance.now() - measureFrom) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await pool.close();

  const routes: Record<string, RouteResult> = {};
  for (const [k, s] of stats) {
    const { latency, ...rest } = s;
    routes[k] = {
      ...rest,
      rps: Math.round(s.acked / seconds),
      eps: Math.round((s.events || s.networkRows) / seconds),
      latency: latency.summary(),
    };
  }
  return {
    seconds,
    warmupSeconds,
    routes,
    ackedEvents: ledger.events,
    ackedNetworkRows: ledger.networkRows,
    unackedEvents,
    unackedNetworkRows,
    eventsPerSecond: Math.round(totalEvents / seconds),
    loadgenCpuPercent: Math.round(((cpu.user + cpu.system) / 1000 / (seconds * 1000)) * 100),
    bySecond: cfg.rps
      ? bySecond.flatMap((l, second) => {
          const { n, p99, max } = l.summary();
          return n ? [{ second, n, p99, max }] : [];
        })
      : undefined,
    warmup:
      cfg.rps && warmupSeconds > 0 ? (({ n, p99, max }) => ({ n, p99, max }))(warmupLatency.summary()) : undefined,
  };
}

// As a child process: one run per message from the parent.
if (process.send) {
  process.on('message', (cfg: LoadConfig) => {
    runLoad(cfg, (p) => process.send!({ type: 'progress', ...p })).then(
      (result) => process.send!({ type: 'done', result }),
      (err) => process.send!({ type: 'error', message: String(err?.stack ?? err) }),
    );
  });
}
