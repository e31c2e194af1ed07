/**
 * The service as the benches run it: `src/main.ts` as a child process on a fresh DATA_DIR and a
 * free port, started with the operator's own settings (no bench-only code path), and healthy.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { freePort } from '../scripts/freePort.ts';
import { metricValue } from '../scripts/metricValue.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The Node flags the service is started with (package.json `start`, the Dockerfile): V8 13
 * (Node 24) sizes the young generation at up to 64 MB per semi-space, against 16 MB on Node 20,
 * which held ~100 MB more of resident heap for the same live data (docs/bench.md, "Memory").
 * A bench's own `nodeArgs` come after these, so a later `--max-semi-space-size` wins.
 */
export const SERVICE_NODE_ARGS = ['--max-semi-space-size=16'];

/**
 * As `npm start` runs it (package.json): chDB's queries and inserts hold libuv pool threads
 * while they run, and the spool's writes and fsyncs wait for one behind them; every thread that
 * allocates (the embedded Postgres's among them) would otherwise get a malloc arena; freed large
 * buffers go back to the system rather than stay in glibc's heap, and those mappings are asked
 * for transparent huge pages (docs/decisions.md). The bench's own environment wins (e.g.
 * `MALLOC_MMAP_THRESHOLD_=16777216` to measure another setting).
 */
export const SERVICE_ENV: Record<string, string> = {
  UV_THREADPOOL_SIZE: '16',
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_TRIM_THRESHOLD_: '1048576',
  GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1',
};

/**
 * A Node process started as the service is: its flags (then BENCH_NODE_ARGS, more flags,
 * space-separated, e.g. `--trace-gc`, which NODE_OPTIONS does not take; then `nodeArgs`) and
 * SERVICE_ENV under the bench's own environment (then `env`). The export bench reads its
 * ceilings in one, so the engine runs under the same settings as in the service.
 */
export function spawnLikeService(
  script: string,
  opts: { nodeArgs?: string[]; env?: Record<string, string>; stdout?: 'inherit' | 'pipe' } = {},
): ChildProcess {
  const extraArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return spawn(
    process.execPath,
    [...SERVICE_NODE_ARGS, ...extraArgs, ...(opts.nodeArgs ?? []), '--import', 'tsx', script],
    {
      cwd: root,
      stdio: ['ignore', opts.stdout ?? 'inherit', 'inherit'],
      env: { ...SERVICE_ENV, ...process.env, ...opts.env },
    },
  );
}

export interface BenchService {
  url: string;
  adminToken: string;
  dataDir: string;
  child: ChildProcess;
}

export async function startBenchService(
  opts: { env?: Record<string, string>; nodeArgs?: string[]; dataDirPrefix?: string } = {},
): Promise<BenchService> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), opts.dataDirPrefix ?? 'flightrec-bench-'));
  const port = await freePort();
  const adminToken = randomBytes(24).toString('hex');
  // BENCH_CPU_PROF_DIR: the service under `node --cpu-prof`, written when it exits on SIGTERM
  // (read with `npx tsx bench/profileTop.ts <file>`).
  const profDir = process.env.BENCH_CPU_PROF_DIR;
  const profArgs = profDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profDir)}`] : [];
  const child = spawnLikeService('src/main.ts', {
    nodeArgs: [...profArgs, ...(opts.nodeArgs ?? [])],
    env: {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      ADMIN_TOKEN: adminToken,
      // Raised by configuration, the same setting an operator would use.
      RATE_LIMIT_INGEST_PER_MIN: process.env.RATE_LIMIT_INGEST_PER_MIN ?? '1000000000',
      ...opts.env,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  // A busy machine starts it slowly (BENCH_START_TIMEOUT_S).
  const startTimeoutS = Number(process.env.BENCH_START_TIMEOUT_S ?? 60);
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`service exited during start-up (${child.exitCode})`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {}
    if (i > startTimeoutS * 10) {
      // not left running behind the bench
      child.kill('SIGKILL');
      throw new Error(`service did not become healthy within ${startTimeoutS} s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, adminToken, dataDir, child };
}

/** A project through the management API: its id and its API key. */
export async function createBenchProject(
  s: { url: string; adminToken: string },
  name: string,
): Promise<{ projectId: string; apiKey: string }> {
  const r = await fetch(`${s.url}/api/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (r.status !== 201) throw new Error(`creating the bench project: ${r.status} ${await r.text()}`);
  const body = (await r.json()) as { apiKey: string; project: { id: string } };
  return { projectId: body.project.id, apiKey: body.apiKey };
}

/** The service's `/metrics` as read once: `value(name)` is an unlabelled series' value (NaN when absent). */
export async function scrapeMetrics(url: string): Promise<{ value(name: string): number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return { value: (name) => metricValue(text, name) };
}

const mb = (b: number) => Math.round(b / 1048576);

/** The service's JS side from its own metrics: V8 heap (committed, used) and external memory, MB. */
export async function jsSide(url: string): Promise<Record<string, number>> {
  const m = await scrapeMetrics(url);
  const v = (name: string) => m.value(name) || 0;
  return {
    heapTotal: mb(v('flightrec_nodejs_heap_size_total_bytes')),
    heapUsed: mb(v('flightrec_nodejs_heap_size_used_bytes')),
    external: mb(v('flightrec_nodejs_external_memory_bytes')),
  };
}
