/**
 * `npm run bench [-- --quick]`: the ingestion load bench (issue 5). See docs/bench.md.
 *
 * Phases, one after the other on the same machine:
 *   1. store ceiling: the embedded ClickHouse's rate and CPU per row for the same rows, no HTTP
 *      (child process), in blocks and as one bulk insert;
 *   2. HTTP ceiling: a bare Fastify that only parses the same bodies (child process);
 *   3. the server shape: the service with ClickHouse out of process (CLICKHOUSE_URL at the
 *      chDB-backed ClickHouse HTTP stand-in, its own process), saturated for BENCH_SERVER_SECONDS:
 *      the API process's CPU per acknowledged event and the store process's CPU per stored row;
 *   4. the embedded service (child process, or BENCH_URL), saturated for BENCH_SECONDS;
 *   5. the embedded service paced at half the request rate it reached, for the latency target;
 *   6. exactly-once, after 3 and after 4/5: the service is stopped (it drains) and its ClickHouse
 *      data is counted;
 *   7. the ingest paths compared (issue 25): bare Fastify at 8 and 32 connections, then the
 *      service with the spool and with the synchronous group commit, each saturated at 8 and 32
 *      connections and paced at half with a visibility probe (BENCH_PATHS_ONLY=1: only this).
 * The load always comes from a separate process (bench/load.ts).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadConfig, LoadResult } from './load.ts';
import { JS_THREAD, ProcWatcher, procSample, schedShare, schedStat, threadCores, threadCpu } from './procStats.ts';
import type { StoreCeiling } from './storeCeiling.ts';
import { routeTable } from './report.ts';
import { createBenchProject, scrapeMetrics, startBenchService } from './service.ts';
import { startClickHouseStandIn } from '../test/helpers/clickhouseStandIn.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const quick = process.argv.includes('--quick');
const num = (name: string, def: number) => {
  const v = env[name];
  if (v === undefined || v === '') return def;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${v}"`);
  return n;
};
const cfg = {
  seconds: num('BENCH_SECONDS', quick ? 10 : 60),
  serverSeconds: num('BENCH_SERVER_SECONDS', quick ? 10 : 30),
  ceilingSeconds: num('BENCH_CEILING_SECONDS', quick ? 5 : 20),
  // Before each saturated phase and ceiling, load that is not measured (a fresh process's JIT, the
  // engine's first inserts): the figures are the steady state. 0 turns it off. Paced phases have
  // their own, below.
  warmupSeconds: env.BENCH_WARMUP_SECONDS === '0' ? 0 : num('BENCH_WARMUP_SECONDS', quick ? 2 : 5),
  pacedSeconds: num('BENCH_PACED_SECONDS', quick ? 5 : 20),
  // The paced phase's own start (a freshly forked load generator's JIT, its new connections, every
  // connection's session start in the same few slots) made its first second the slowest of the
  // phase in every run: shown apart, not counted in the phase's latencies.
  pacedWarmupSeconds: env.BENCH_PACED_WARMUP_SECONDS === '0' ? 0 : num('BENCH_PACED_WARMUP_SECONDS', quick ? 1 : 3),
  // Lets background merges left by the saturated phase finish before the paced phase.
  settleSeconds: num('BENCH_SETTLE_SECONDS', quick ? 2 : 5),
  storeSecondsEach: num('BENCH_STORE_SECONDS', quick ? 2 : 5),
  connections: num('BENCH_CONNECTIONS', 64),
  batchesPerSession: num('BENCH_BATCHES_PER_SESSION', 20),
  mix: env.BENCH_MIX ?? 'events100=80,events500=8,network200=10,crash=0.2',
  url: env.BENCH_URL,
  cpuProfDir: env.BENCH_CPU_PROF_DIR,
  // The ingest paths compared (issue 25): the spool and the synchronous group commit.
  pathSeconds: num('BENCH_PATH_SECONDS', quick ? 8 : 30),
  pathConnections: (env.BENCH_PATH_CONNECTIONS ?? '8,32').split(',').map(Number),
  // `spool`, `sync` or both (the default): one path alone for a profile or an A/B.
  paths: (env.BENCH_PATHS ?? 'spool,sync').split(','),
  pathsOnly: env.BENCH_PATHS_ONLY === '1',
  // The paced phase's rate in requests/s (default: half the saturated phase's): the same offered
  // load for every build of an A/B, whose saturated rates differ.
  pacedRps: env.BENCH_PACED_RPS ? num('BENCH_PACED_RPS', 0) : undefined,
};
const shape = cfg.url ? 'remote' : env.DATABASE_URL ? `postgres${env.REDIS_URL ? '+redis' : ''}+chdb` : 'embedded';

const log = (s: string) => process.stdout.write(`${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function exited(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`pid ${child.pid} did not exit within ${timeoutMs} ms`)), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(t);
      resolve(code);
    });
  });
}

/** Runs one load phase in a fresh load-generator process, printing a live progress line. */
async function load(label: string, lc: LoadConfig, watcher?: ProcWatcher): Promise<LoadResult> {
  const child = fork(path.join(root, 'bench/load.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    return await new Promise<LoadResult>((resolve, reject) => {
      child.on(
        'message',
        (m: {
          type: string;
          result?: LoadResult;
          message?: string;
          elapsed?: number;
          requests?: number;
          events?: number;
          errors?: number;
        }) => {
          if (m.type === 'progress') {
            const srv = watcher?.last ? ` | server RSS ${watcher.last.rssMb} MB` : '';
            process.stdout.write(
              m.elapsed! < 0.5
                ? `\r${label}: warming up${srv}   `
                : `\r${label}: ${m.elapsed!.toFixed(0)}/${lc.seconds} s  ${m.requests} req  ${Math.round(m.events! / m.elapsed!).toLocaleString('en-US')} events/s  ${m.errors} errors${srv}   `,
            );
          } else if (m.type === 'done') {
            process.stdout.write('\n');
            resolve(m.result!);
          } else if (m.type === 'error') reject(new Error(m.message));
        },
      );
      child.once('exit', (code) => reject(new Error(`load generator exited with ${code}`)));
      child.send(lc);
    });
  } finally {
    child.kill('SIGTERM');
  }
}

async function storeCeiling(): Promise<StoreCeiling> {
  log(
    `store ceiling: embedded ClickHouse inserts of the ingest lines, ${cfg.storeSecondsEach} s per block size, then one bulk insert…`,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/storeCeiling.ts')], {
    cwd: root,
    env: { ...env, BENCH_STORE_SECONDS: String(cfg.storeSecondsEach) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  const code = await exited(child, 600_000);
  if (code !== 0) throw new Error(`store ceiling failed (${code})`);
  return JSON.parse(out.trim().split('\n').pop()!);
}

async function bareCeiling(
  connections = cfg.connections,
  seconds = cfg.ceilingSeconds,
): Promise<{ load: LoadResult; cpuCores: number; peakRssMb: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/bareServer.ts')], {
    cwd: root,
    env: { ...env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve(JSON.parse(String(d)).port));
    child.once('exit', () => reject(new Error('bare Fastify exited')));
  });
  const w = new ProcWatcher(child.pid!);
  w.start();
  try {
    const r = await load(
      `bare Fastify, ${connections} connections`,
      {
        url: `http://127.0.0.1:${port}`,
        apiKey: 'none',
        connections,
        seconds,
        warmupSeconds: cfg.warmupSeconds,
        mix: cfg.mix,
        batchesPerSession: cfg.batchesPerSession,
      },
      w,
    );
    w.stop();
    return { load: r, cpuCores: w.cpuCores(), peakRssMb: w.peakRssMb };
  } finally {
    child.kill('SIGTERM');
    await exited(child, 10_000).catch(() => child.kill('SIGKILL'));
  }
}

interface Service {
  url: string;
  adminToken: string;
  dataDir?: string;
  child?: ChildProcess;
}

async function startService(extraEnv: Record<string, string> = {}): Promise<Service> {
  if (cfg.url) {
    if (!env.BENCH_ADMIN_TOKEN)
      throw new Error('BENCH_URL needs BENCH_ADMIN_TOKEN (the service ADMIN_TOKEN) to create the bench project');
    return { url: cfg.url.replace(/\/$/, ''), adminToken: env.BENCH_ADMIN_TOKEN };
  }
  const nodeArgs = cfg.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(cfg.cpuProfDir)] : [];
  return startBenchService({ env: extraEnv, nodeArgs });
}

const createProject = async (s: Service) => (await createBenchProject(s, `bench ${new Date().toISOString()}`)).apiKey;

async function exactlyOnce(
  chDir: string,
  acked: { events: number; network: number; unackedEvents: number; unackedNetwork: number },
) {
  const { openChdb } = await import('../src/stores/clickhouse/chdb.ts');
  const ch = await openChdb(chDir);
  try {
    const [ev] = await ch.query<{ rows: number; uniq: number }>(
      'SELECT count() AS rows, uniqExact(session_id, sequence_number) AS uniq FROM events FINAL',
    );
    const [evRaw] = await ch.query<{ rows: number }>('SELECT count() AS rows FROM events');
    const [nl] = await ch.query<{ rows: number; uniq: number }>(
      'SELECT count() AS rows, uniqExact(id) AS uniq FROM network_logs FINAL',
    );
    const verdict = (stored: { rows: number; uniq: number }, a: number, unacked: number) => ({
      acknowledged: a,
      storedFinal: Number(stored.rows),
      distinct: Number(stored.uniq),
      duplicated: Number(stored.rows) - Number(stored.uniq),
      lost: Math.max(0, a - Number(stored.uniq)),
      // Rows of requests that failed for good may or may not have been written; they are not acknowledged.
      unacknowledgedSent: unacked,
      ok: Number(stored.rows) === Number(stored.uniq) && Number(stored.uniq) >= a && Number(stored.uniq) <= a + unacked,
    });
    return {
      events: { ...verdict(ev!, acked.events, acked.unackedEvents), physicalRowsBeforeMerge: Number(evRaw!.rows) },
      networkLogs: verdict(nl!, acked.network, acked.unackedNetwork),
    };
  } finally {
    await ch.close();
  }
}

/** The ClickHouse HTTP stand-in (chDB in its own process), as the tests use it. */
async function startShim(): Promise<{ url: string; dir: string; child: ChildProcess }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-bench-ch-'));
  const { url, child } = await startClickHouseStandIn(dir);
  return { url, dir, child };
}

/**
 * The server shape: API process and ClickHouse in separate processes, saturated. CPU seconds of
 * each over the phase, from /proc, divided by what was acknowledged and stored.
 */
async function serverShape() {
  const shim = await startShim();
  const svc = await startService({ CLICKHOUSE_URL: shim.url });
  try {
    const apiKey = await createProject(svc);
    const api0 = procSample(svc.child!.pid!)!;
    const ch0 = procSample(shim.child.pid!)!;
    const w = new ProcWatcher(svc.child!.pid!);
    w.start();
    const r = await load(
      'server shape (ClickHouse out of process)',
      {
        url: svc.url,
        apiKey,
        connections: cfg.connections,
        seconds: cfg.serverSeconds,
        mix: cfg.mix,
        batchesPerSession: cfg.batchesPerSession,
      },
      w,
    );
    w.stop();
    const api1 = procSample(svc.child!.pid!)!;
    const ch1 = procSample(shim.child.pid!)!;
    const storedRows = r.ackedEvents + r.ackedNetworkRows;
    svc.child!.kill('SIGTERM');
    await exited(svc.child!, 120_000);
    shim.child.kill('SIGTERM');
    await exited(shim.child, 30_000);
    const check = await exactlyOnce(shim.dir, {
      events: r.ackedEvents,
      network: r.ackedNetworkRows,
      unackedEvents: r.unackedEvents,
      unackedNetwork: r.unackedNetworkRows,
    });
    return {
      load: r,
      apiCpuCores: Math.round(((api1.cpuSec - api0.cpuSec) / r.seconds) * 100) / 100,
      apiCpuUsPerEvent: Math.round((((api1.cpuSec - api0.cpuSec) * 1e6) / r.ackedEvents) * 100) / 100,
      apiPeakRssMb: w.peakRssMb,
      storeCpuCores: Math.round(((ch1.cpuSec - ch0.cpuSec) / r.seconds) * 100) / 100,
      storeCpuUsPerRow: Math.round((((ch1.cpuSec - ch0.cpuSec) * 1e6) / storedRows) * 100) / 100,
      exactlyOnce: check,
    };
  } finally {
    if (svc.child && svc.child.exitCode === null) svc.child.kill('SIGKILL');
    if (shim.child.exitCode === null) shim.child.kill('SIGKILL');
    fs.rmSync(shim.dir, { recursive: true, force: true });
    if (svc.dataDir) fs.rmSync(svc.dataDir, { recursive: true, force: true });
  }
}

/** Node's own threads (the JS thread, V8's and libuv's helpers); every other thread is the embedded engine's. */
const NODE_THREADS = new Set([
  JS_THREAD,
  'node',
  'V8 DefaultWorke',
  'V8 DefaultWorker',
  'libuv-worker',
  'node-MainThread',
]);
const engineCpuSec = (t: Map<string, number>) => [...t].reduce((n, [k, v]) => (NODE_THREADS.has(k) ? n : n + v), 0);
/**
 * Every thread of the process. The engine's figure above leaves out the libuv pool, where chDB
 * runs each insert's parse (its calls are made from the pool) beside the spool's writes; a
 * pool thread's time cannot be split between the two, so the whole process is the bound.
 */
const processCpuSec = (t: Map<string, number>) => [...t.values()].reduce((n, v) => n + v, 0);

/**
 * Visibility: one event at a time into a probe session, each after the last became visible;
 * the time from its 201 until the export API counts it. Runs until `stop` resolves.
 */
async function visibilityProbe(url: string, apiKey: string, stop: Promise<void>): Promise<number[]> {
  const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const sessionId = crypto.randomUUID();
  const started = await fetch(`${url}/ingest/session`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      sessionId,
      startedAt: Date.now(),
      device: { platform: 'ios', osVersion: '17', appVersion: '1', sdkVersion: '0.1.0' },
    }),
  });
  if (started.status !== 201) throw new Error(`probe session: ${started.status} ${await started.text()}`);
  let done = false;
  void stop.then(() => (done = true));
  const out: number[] = [];
  for (let seq = 0; !done; seq++) {
    const body = JSON.stringify({
      sessionId,
      events: [{ type: 'custom', sessionId, timestamp: Date.now(), sequenceNumber: seq, name: 'probe' }],
    });
    const r = await fetch(`${url}/ingest/events`, { method: 'POST', headers: auth, body });
    if (r.status !== 201) {
      await sleep(100);
      continue;
    }
    const acked = performance.now();
    while (!done) {
      const e = await fetch(`${url}/export/events?sessionId=${sessionId}&limit=1`, { headers: auth });
      if (e.status === 200 && ((await e.json()) as { total: number }).total > seq) {
        out.push(Math.round(performance.now() - acked));
        break;
      }
      await sleep(20);
    }
    await sleep(50);
  }
  return out;
}

const GC_KINDS = ['minor', 'major', 'incremental', 'weakcb'] as const;
type GcSeconds = Record<(typeof GC_KINDS)[number], number>;

/** Seconds the service's JS thread has spent in GC pauses so far, by kind (prom-client's histogram). */
async function gcSeconds(url: string): Promise<GcSeconds> {
  const m = await scrapeMetrics(url);
  return Object.fromEntries(
    GC_KINDS.map((k) => [k, m.value(`flightrec_nodejs_gc_duration_seconds_sum{kind="${k}"}`) || 0]),
  ) as GcSeconds;
}

/** The share of a phase's wall time the JS thread spent in each kind of GC pause. */
const gcShare = (a: GcSeconds, b: GcSeconds, seconds: number) =>
  Object.fromEntries(GC_KINDS.map((k) => [k, Math.round(((b[k] - a[k]) / seconds) * 1000) / 1000]));

const percentile = (xs: number[], p: number) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

/**
 * Issue 25: the embedded service on each ingest path (INGEST_SPOOL=true and false), saturated
 * at each of `pathConnections`, then paced at half the rate of the largest with the visibility
 * probe beside it. Engine CPU per stored row counts every non-Node thread of the process from
 * the start of a saturated phase until the spool is empty again (the loader's backlog included).
 */
async function ingestPaths(bare: Record<number, number>) {
  const out: Record<string, unknown> = {};
  for (const spool of [true, false].filter((x) => cfg.paths.includes(x ? 'spool' : 'sync'))) {
    const name = spool ? 'spool' : 'sync';
    const svc = await startBenchService({
      env: { INGEST_SPOOL: String(spool), RATE_LIMIT_EXPORT_PER_MIN: '1000000000' },
    });
    try {
      const apiKey = await createProject(svc);
      const w = new ProcWatcher(svc.child.pid!);
      w.start();
      const base = { url: svc.url, apiKey, mix: cfg.mix, batchesPerSession: cfg.batchesPerSession };
      const saturated: Record<number, unknown> = {};
      let lastRps = 0;
      for (const connections of cfg.pathConnections) {
        const t0 = threadCpu(svc.child.pid!);
        const gc0 = await gcSeconds(svc.url);
        const sched0 = schedStat(svc.child.pid!);
        const r = await load(
          `${name} path, ${connections} connections`,
          { ...base, connections, seconds: cfg.pathSeconds, warmupSeconds: cfg.warmupSeconds },
          w,
        );
        const phaseSeconds = r.seconds + r.warmupSeconds;
        const jsSched = schedShare(sched0, schedStat(svc.child.pid!), phaseSeconds);
        const drainT0 = performance.now();
        for (let i = 0; spool && i < 600 && (await scrapeMetrics(svc.url)).value('flightrec_spool_bytes') > 0; i++)
          await sleep(100);
        const drainSeconds = Math.round((performance.now() - drainT0) / 100) / 10;
        const t1 = threadCpu(svc.child.pid!);
        const engineSec = engineCpuSec(t1) - engineCpuSec(t0);
        const storedRows = Math.max(1, r.ackedEvents + r.ackedNetworkRows);
        const perRowUs = (sec: number) => Math.round(((sec * 1e6) / storedRows) * 100) / 100;
        const ev100 = r.routes.events100?.eps ?? 0;
        const gcSat = gcShare(gc0, await gcSeconds(svc.url), phaseSeconds + drainSeconds);
        const phase = {
          load: r,
          events100PerSecond: ev100,
          events100VsBareFastify: ratioOf(ev100, bare[connections]),
          engineCpuUsPerStoredRow: perRowUs(engineSec),
          processCpuUsPerStoredRow: perRowUs(processCpuSec(t1) - processCpuSec(t0)),
          cpuCoresByThread: threadCores(t0, t1, phaseSeconds + drainSeconds),
          jsThreadGcShare: gcSat,
          jsThreadSchedule: jsSched,
          spoolDrainSecondsAfter: spool ? drainSeconds : null,
        };
        saturated[connections] = phase;
        log(routeTable(`${name} path, ${connections} connections, saturated`, r));
        log(
          `${name} path, ${connections} connections: events100 ${ev100.toLocaleString('en-US')}/s = ${ratioOf(ev100, bare[connections])} of bare Fastify; engine ${phase.engineCpuUsPerStoredRow} µs CPU per stored row (the whole process ${phase.processCpuUsPerStoredRow})${spool ? `; spool drained ${drainSeconds} s after the phase` : ''}; JS thread in GC pauses ${JSON.stringify(gcSat)}, its time ${JSON.stringify(jsSched)}`,
        );
        lastRps = Object.values(r.routes).reduce((a, x) => a + x.rps, 0);
      }
      await sleep(cfg.settleSeconds * 1000);
      const rps = cfg.pacedRps ?? Math.max(1, Math.round(lastRps / 2));
      let stopProbe!: () => void;
      const probe = visibilityProbe(svc.url, apiKey, new Promise<void>((r) => (stopProbe = r)));
      // The server's event-loop delay during the paced phase (prom-client resets its histogram at
      // each scrape), to tell a tail made on the JS thread from one made waiting for a core.
      const lag = eventLoopLag(svc.url);
      const pacedT0 = threadCpu(svc.child.pid!);
      const pacedSched0 = schedStat(svc.child.pid!);
      const pacedGc0 = await gcSeconds(svc.url);
      const paced = await load(
        `${name} path @ ${rps} req/s`,
        {
          ...base,
          connections: Math.max(...cfg.pathConnections),
          seconds: cfg.pacedSeconds,
          warmupSeconds: cfg.pacedWarmupSeconds,
          rps,
        },
        w,
      ).finally(() => {
        stopProbe();
        lag.stop();
      });
      // These counters span the warm-up too.
      const pacedWhole = paced.seconds + paced.warmupSeconds;
      const pacedThreads = threadCores(pacedT0, threadCpu(svc.child.pid!), pacedWhole);
      const pacedJsSched = schedShare(pacedSched0, schedStat(svc.child.pid!), pacedWhole);
      const pacedGc = gcShare(pacedGc0, await gcSeconds(svc.url), pacedWhole);
      const loopLag = await lag.result;
      const visible = await probe;
      w.stop();
      log(routeTable(`${name} path, paced at half (${rps} req/s)`, paced));
      const vis = {
        samples: visible.length,
        p50: percentile(visible, 50),
        p99: percentile(visible, 99),
        max: visible.length ? Math.max(...visible) : null,
      };
      log(
        `${name} path: visibility (201 → counted by the export API) ms ${JSON.stringify(vis)}; peak RSS ${w.peakRssMb} MB`,
      );
      log(
        `${name} path, paced: requests' p99 by second ms ${JSON.stringify(paced.bySecond?.map((b) => Math.round(b.p99)))}${warmupNote(paced)}; the JS thread's time ${JSON.stringify(pacedJsSched)}`,
      );
      log(
        `${name} path, paced: event-loop delay ms ${JSON.stringify(loopLag)}; cores by thread ${JSON.stringify(pacedThreads)}; share of the JS thread's time in GC pauses ${JSON.stringify(pacedGc)}`,
      );
      svc.child.kill('SIGTERM');
      await exited(svc.child, 120_000);
      out[name] = {
        saturated,
        pacedHalf: paced,
        p99AtHalfLoadMs: paced.routes.events100?.latency.p99 ?? null,
        pacedEventLoopDelayMs: loopLag,
        pacedCoresByThread: pacedThreads,
        pacedJsThreadSchedule: pacedJsSched,
        pacedJsThreadGcShare: pacedGc,
        visibilityMs: vis,
        peakRssMb: w.peakRssMb,
      };
    } finally {
      if (svc.child.exitCode === null) svc.child.kill('SIGKILL');
      fs.rmSync(svc.dataDir, { recursive: true, force: true });
    }
  }
  return out;
}

/**
 * Samples the server's event-loop delay once a second until stopped: the worst p99 and max of
 * the one-second windows (prom-client's `nodejs_eventloop_lag_*`, reset at each scrape).
 */
function eventLoopLag(url: string) {
  let stopped = false;
  const result = (async () => {
    const maxBySecond: number[] = [];
    let p99 = 0;
    let max = 0;
    await scrapeMetrics(url).catch(() => undefined); // starts the first window
    while (!stopped) {
      await sleep(1000);
      // A scrape the busy service does not answer loses its window, not the bench.
      const m = await scrapeMetrics(url).catch(() => undefined);
      if (!m) continue;
      const windowMax = m.value('flightrec_nodejs_eventloop_lag_max_seconds') * 1000;
      p99 = Math.max(p99, m.value('flightrec_nodejs_eventloop_lag_p99_seconds') * 1000);
      max = Math.max(max, windowMax);
      maxBySecond.push(Math.round(windowMax));
    }
    return { worstP99: Math.round(p99 * 10) / 10, max: Math.round(max * 10) / 10, maxBySecond };
  })();
  return { result, stop: () => (stopped = true) };
}

/** The paced warm-up's tail, printed beside the figures it is left out of. */
function warmupNote(r: LoadResult): string {
  return r.warmup?.n
    ? ` (its ${r.warmupSeconds} s warm-up, not counted: p99 ${Math.round(r.warmup.p99)} ms, max ${Math.round(r.warmup.max)}, ${r.warmup.n} requests)`
    : '';
}

function ratioOf(a: number, b: number | undefined): number | null {
  return b ? Math.round((a / b) * 1000) / 1000 : null;
}

function machine() {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  return {
    nproc: os.cpus().length,
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    uptimeLoadAvg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    uptime: fs.readFileSync('/proc/loadavg', 'utf8').trim(),
  };
}

async function main() {
  const startedAt = new Date().toISOString();
  const m0 = machine();
  log(
    `flightrec ingestion bench — shape ${shape}${quick ? ' (quick)' : ''}; ${m0.nproc} × ${m0.cpuModel}, ${m0.memoryGb} GB; load average ${m0.uptimeLoadAvg.join(' ')}`,
  );
  log(
    `mix ${cfg.mix}; ${cfg.connections} connections; service ${cfg.seconds} s, ceilings ${cfg.ceilingSeconds} s, each after ${cfg.warmupSeconds} s of warm-up; paced ${cfg.pacedSeconds} s`,
  );

  if (cfg.pathsOnly) return pathsReport(startedAt, m0);
  const store = cfg.url ? undefined : await storeCeiling();
  if (store) {
    const fmt = (f: { rowsPerSecond: number; cpuUsPerRow: number }) =>
      `${f.rowsPerSecond.toLocaleString('en-US')} rows/s, ${f.cpuUsPerRow} µs CPU/row`;
    log(
      `store ceiling: ${Object.entries(store.blocks)
        .map(([k, v]) => `${k}-event inserts ${fmt(v)}`)
        .join('; ')}; bulk ${fmt(store.bulk)}`,
    );
  }
  const bare = await bareCeiling();
  log(routeTable('bare Fastify ceiling', bare.load));
  const bareCpuUsPerEvent =
    Math.round(
      ((bare.cpuCores * (bare.load.seconds + bare.load.warmupSeconds) * 1e6) / Math.max(1, bare.load.ackedEvents)) *
        100,
    ) / 100;
  const server = cfg.url ? undefined : await serverShape();
  if (server) {
    log(routeTable('server shape (ClickHouse out of process), saturated', server.load));
    log(
      `server shape: API ${server.apiCpuCores} cores, ${server.apiCpuUsPerEvent} µs CPU per acknowledged event (bare Fastify: ${bareCpuUsPerEvent}); ClickHouse ${server.storeCpuCores} cores, ${server.storeCpuUsPerRow} µs CPU per stored row (engine bulk insert: ${store?.bulk.cpuUsPerRow}); API peak RSS ${server.apiPeakRssMb} MB`,
    );
    log(
      `server shape exactly-once: events ${server.exactlyOnce.events.ok ? 'OK' : 'FAILED'} ${JSON.stringify(server.exactlyOnce.events)}; network logs ${server.exactlyOnce.networkLogs.ok ? 'OK' : 'FAILED'}`,
    );
  }

  const svc = await startService();
  const apiKey = await createProject(svc);
  const watcher = svc.child ? new ProcWatcher(svc.child.pid!) : undefined;
  watcher?.start();
  const base = {
    url: svc.url,
    apiKey,
    connections: cfg.connections,
    mix: cfg.mix,
    batchesPerSession: cfg.batchesPerSession,
  };
  const threads0 = svc.child ? threadCpu(svc.child.pid!) : undefined;
  const sat = await load('service', { ...base, seconds: cfg.seconds, warmupSeconds: cfg.warmupSeconds }, watcher);
  const satThreads =
    svc.child && threads0 ? threadCores(threads0, threadCpu(svc.child.pid!), sat.seconds + sat.warmupSeconds) : null;
  watcher?.sample();
  const satCpu = watcher?.cpuCores() ?? 0;
  const totalRps = Object.values(sat.routes).reduce((a, r) => a + r.rps, 0);
  await sleep(cfg.settleSeconds * 1000);
  const paced = await load(
    `service @ ${Math.round(totalRps / 2)} req/s`,
    {
      ...base,
      seconds: cfg.pacedSeconds,
      warmupSeconds: cfg.pacedWarmupSeconds,
      rps: Math.max(1, Math.round(totalRps / 2)),
    },
    watcher,
  );
  watcher?.stop();

  let check: Awaited<ReturnType<typeof exactlyOnce>> | undefined;
  let shutdownMs = 0;
  if (svc.child && svc.dataDir) {
    const t0 = performance.now();
    svc.child.kill('SIGTERM');
    const code = await exited(svc.child, 120_000);
    shutdownMs = Math.round(performance.now() - t0);
    if (code !== 0) log(`warning: service exited with ${code}`);
    check = await exactlyOnce(path.join(svc.dataDir, 'clickhouse'), {
      events: sat.ackedEvents + paced.ackedEvents,
      network: sat.ackedNetworkRows + paced.ackedNetworkRows,
      unackedEvents: sat.unackedEvents + paced.unackedEvents,
      unackedNetwork: sat.unackedNetworkRows + paced.unackedNetworkRows,
    });
    fs.rmSync(svc.dataDir, { recursive: true, force: true });
  }

  const paths = cfg.url ? null : await pathComparison();
  const ev100 = sat.routes.events100;
  const ratio = ratioOf;
  const result = {
    startedAt,
    shape,
    quick,
    config: cfg,
    machine: { ...m0, loadAvgAtEnd: machine().uptimeLoadAvg },
    ceilings: {
      store: store ?? null,
      bareFastify: {
        eventsPerSecond: bare.load.eventsPerSecond,
        events100PerSecond: bare.load.routes.events100?.eps ?? 0,
        cpuCores: bare.cpuCores,
        cpuUsPerEvent: bareCpuUsPerEvent,
        routes: bare.load.routes,
      },
    },
    serverShape: server ?? null,
    ingestPaths: paths,
    service: {
      saturated: sat,
      pacedHalf: paced,
      server: watcher
        ? {
            peakRssMb: watcher.peakRssMb,
            cpuCoresSaturated: satCpu,
            cpuCoresByThreadSaturated: satThreads,
            cpuCoresOverall: watcher.cpuCores(),
            shutdownMs,
            // The whole embedded system (API, PGlite and the in-process ClickHouse) per acknowledged event.
            cpuUsPerEventSaturated:
              Math.round(((satCpu * (sat.seconds + sat.warmupSeconds) * 1e6) / Math.max(1, sat.ackedEvents)) * 100) /
              100,
          }
        : null,
    },
    ratios: {
      eventsPerSecondVsBareFastify: ratio(sat.eventsPerSecond, bare.load.eventsPerSecond),
      events100VsBareFastify: ratio(ev100?.eps ?? 0, bare.load.routes.events100?.eps),
      eventsPerSecondVsStoreInsert: store
        ? Object.fromEntries(
            Object.entries(store.blocks).map(([k, v]) => [k, ratio(sat.eventsPerSecond, v.rowsPerSecond)]),
          )
        : null,
      apiCpuPerEventVsBareFastify: server ? ratio(server.apiCpuUsPerEvent, bareCpuUsPerEvent) : null,
      storeCpuPerRowVsBulkInsert: server && store ? ratio(server.storeCpuUsPerRow, store.bulk.cpuUsPerRow) : null,
    },
    exactlyOnce: check ?? 'not checked: BENCH_URL targets a service whose stores this process cannot open',
    // The targets, for /ingest/events with 100-event batches on this 2-core machine.
    targets: {
      apiCpuUsPerEvent: {
        value: server?.apiCpuUsPerEvent ?? null,
        target: 4,
        met: server ? server.apiCpuUsPerEvent <= 4 : null,
      },
      storeCpuUsPerRow: {
        value: server?.storeCpuUsPerRow ?? null,
        target: 3,
        met: server ? server.storeCpuUsPerRow <= 3 : null,
      },
      events100VsBareFastify: {
        value: ratioOf(ev100?.eps ?? 0, bare.load.routes.events100?.eps),
        target: 0.25,
        met: (ratioOf(ev100?.eps ?? 0, bare.load.routes.events100?.eps) ?? 0) >= 0.25,
      },
      p99AtHalfLoadMs: {
        value: paced.routes.events100?.latency.p99 ?? null,
        target: 50,
        met: (paced.routes.events100?.latency.p99 ?? Infinity) <= 50,
      },
      peakRssMb: { value: watcher?.peakRssMb ?? null, target: 700, met: watcher ? watcher.peakRssMb <= 700 : null },
      exactlyOnce: {
        met: check
          ? check.events.ok &&
            check.networkLogs.ok &&
            (!server || (server.exactlyOnce.events.ok && server.exactlyOnce.networkLogs.ok))
          : null,
      },
    },
  };

  log('');
  log(routeTable('service, saturated', sat));
  log(routeTable(`service, paced at half (${Math.round(totalRps / 2)} req/s)`, paced) + warmupNote(paced));
  if (watcher)
    log(
      `server: peak RSS ${watcher.peakRssMb} MB, CPU ${satCpu} cores while saturated (by thread: ${JSON.stringify(satThreads)}); drained and stopped in ${shutdownMs} ms`,
    );
  log(
    `ratios: service/bare Fastify events/s ${result.ratios.eventsPerSecondVsBareFastify} (events100 route ${result.ratios.events100VsBareFastify}); service/store insert ${JSON.stringify(result.ratios.eventsPerSecondVsStoreInsert)}`,
  );
  if (paths) log(`targets by ingest path (issue 25): ${JSON.stringify(paths.targets)}`);
  log(
    'targets: ' +
      Object.entries(result.targets)
        .map(([k, t]) => `${k} ${'value' in t ? t.value : ''} ${t.met === null ? 'n/a' : t.met ? 'MET' : 'NOT MET'}`)
        .join('; '),
  );
  if (check)
    log(
      `exactly-once: events ${check.events.ok ? 'OK' : 'FAILED'} ${JSON.stringify(check.events)}; network logs ${check.networkLogs.ok ? 'OK' : 'FAILED'} ${JSON.stringify(check.networkLogs)}`,
    );

  const dir = path.join(root, 'bench/results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${shape}${quick ? '-quick' : ''}-${startedAt.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  log(`results: ${path.relative(root, file)}`);
  if (result.targets.exactlyOnce.met === false) process.exitCode = 1;
}

/** Bare Fastify at each path connection count, then both ingest paths. */
async function pathComparison() {
  const bare: Record<number, number> = {};
  for (const c of cfg.pathConnections) {
    const b = await bareCeiling(c);
    bare[c] = b.load.routes.events100?.eps ?? 0;
    log(`bare Fastify, ${c} connections: events100 ${bare[c]!.toLocaleString('en-US')} events/s`);
  }
  const paths = await ingestPaths(bare);
  return { bareFastifyEvents100PerSecond: bare, ...paths, targets: pathTargets(paths) };
}

/** Issue 25's targets, for each path. */
function pathTargets(paths: Record<string, unknown>) {
  const t: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(paths) as [
    string,
    {
      saturated: Record<number, { events100VsBareFastify: number | null; engineCpuUsPerStoredRow: number }>;
      p99AtHalfLoadMs: number | null;
      visibilityMs: { p99: number | null };
      peakRssMb: number;
    },
  ][]) {
    const at = (c: number) => p.saturated[c]?.events100VsBareFastify ?? null;
    const maxC = Math.max(...cfg.pathConnections);
    t[name] = {
      // Issue 31's targets (issue 25's were 0.25 and 0.15).
      events100VsBare32: { value: at(32), target: 0.3, met: (at(32) ?? 0) >= 0.3 },
      events100VsBare8: { value: at(8), target: 0.25, met: (at(8) ?? 0) >= 0.25 },
      p99AtHalfLoadMs: { value: p.p99AtHalfLoadMs, target: 50, met: (p.p99AtHalfLoadMs ?? Infinity) <= 50 },
      engineCpuUsPerStoredRow: {
        value: p.saturated[maxC]?.engineCpuUsPerStoredRow ?? null,
        target: 5,
        met: (p.saturated[maxC]?.engineCpuUsPerStoredRow ?? Infinity) <= 5,
      },
      visibilityP99Ms: { value: p.visibilityMs.p99, target: 2000, met: (p.visibilityMs.p99 ?? Infinity) <= 2000 },
      peakRssMb: { value: p.peakRssMb, target: 700, met: p.peakRssMb <= 700 },
    };
  }
  return t;
}

/** BENCH_PATHS_ONLY=1: only the comparison of the ingest paths, with its bare-Fastify ceilings. */
async function pathsReport(startedAt: string, m0: ReturnType<typeof machine>) {
  const paths = await pathComparison();
  log(`targets by path: ${JSON.stringify(paths.targets)}`);
  const dir = path.join(root, 'bench/results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `paths-${shape}${quick ? '-quick' : ''}-${startedAt.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(
    file,
    `${JSON.stringify(
      {
        startedAt,
        shape,
        quick,
        config: cfg,
        machine: { ...m0, loadAvgAtEnd: machine().uptimeLoadAvg },
        ingestPaths: paths,
      },
      null,
      2,
    )}\n`,
  );
  log(`results: ${path.relative(root, file)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
