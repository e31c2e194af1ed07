/**
 * `npx tsx bench/memory.ts`: where the embedded service's resident memory goes under the ingest
 * load (docs/bench.md, "Memory"). For each variant (BENCH_MEM_VARIANTS, `;`-separated: `default`,
 * or space-separated node flags `--x=y` and environment settings `NAME=value` for the service), BENCH_MEM_ROUNDS times, alternating: a bare Fastify
 * ceiling, then the service as the benches start it, both under the same load (bench/load.ts,
 * BENCH_CONNECTIONS for BENCH_SECONDS). Every 250 ms it samples the service's RSS by kind
 * (/proc: anonymous, file-backed) and its JS side (its own metrics: V8 heap, external memory);
 * it prints the sample taken at peak RSS and the service's events/s as a ratio to the ceiling
 * (BENCH_MEM_SERIES=1: the JS side and the RSS every second as well).
 */
import { fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadConfig, LoadResult } from './load.ts';
import { smapsByKind, statusMb } from './procStats.ts';
import { createBenchProject, jsSide, startBenchService } from './service.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const seconds = Number(process.env.BENCH_SECONDS ?? 20);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const rounds = Number(process.env.BENCH_MEM_ROUNDS ?? 1);
const variants = (process.env.BENCH_MEM_VARIANTS ?? 'default').split(';');
const mix = process.env.BENCH_MIX ?? 'events100=80,events500=8,network200=10,crash=0.2';

function load(lc: LoadConfig): Promise<LoadResult> {
  const child = fork(path.join(root, 'bench/load.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise<LoadResult>((resolve, reject) => {
    child.on('message', (m: { type: string; result?: LoadResult; message?: string }) => {
      if (m.type === 'done' && m.result) resolve(m.result);
      else if (m.type === 'error') reject(new Error(m.message));
    });
    child.send(lc);
  }).finally(() => child.kill('SIGTERM'));
}

async function bare(): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/bareServer.ts')], {
    cwd: root,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise<number>((resolve) =>
      child.stdout?.once('data', (d) => resolve(JSON.parse(String(d)).port)),
    );
    const r = await load({
      url: `http://127.0.0.1:${port}`,
      apiKey: 'none',
      connections,
      seconds,
      mix,
      batchesPerSession: 20,
    });
    return r.routes.events100?.eps ?? 0;
  } finally {
    child.kill('SIGTERM');
  }
}

async function service(variant: string) {
  const words = variant === 'default' ? [] : variant.split(' ').filter(Boolean);
  const nodeArgs = words.filter((w) => w.startsWith('--'));
  const env = Object.fromEntries(
    words.filter((w) => !w.startsWith('--')).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
  );
  const svc = await startBenchService({ env: { RATE_LIMIT_EXPORT_PER_MIN: '1000000000', ...env }, nodeArgs });
  const pid = svc.child.pid ?? 0;
  try {
    const { apiKey } = await createBenchProject(svc, 'memory');
    const atStart = { ...statusMb(pid), ...(await jsSide(svc.url)) };
    let peak: Record<string, number> = { VmRSS: 0 };
    let peakMaps: Record<string, number> | undefined;
    let sampling = true;
    // BENCH_MEM_SERIES=1: the JS side every second too (external memory between peaks).
    const series: Record<string, number>[] = [];
    let tick = 0;
    const sampler = (async () => {
      while (sampling) {
        const st = statusMb(pid);
        if (process.env.BENCH_MEM_SERIES === '1' && tick++ % 4 === 0)
          series.push({ rss: st.VmRSS ?? 0, ...(await jsSide(svc.url)) });
        if ((st.VmRSS ?? 0) > (peak.VmRSS ?? 0)) {
          peak = { ...st, ...(await jsSide(svc.url)) };
          if (process.env.BENCH_MEM_SMAPS === '1') peakMaps = smapsByKind(pid);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const r = await load({ url: svc.url, apiKey, connections, seconds, mix, batchesPerSession: 20 });
    await new Promise((res) => setTimeout(res, 3000)); // the spool's last loads
    sampling = false;
    await sampler;
    return {
      events100PerSecond: r.routes.events100?.eps ?? 0,
      atStart,
      peak: { ...peak, VmHWM: statusMb(pid).VmHWM },
      peakMaps,
      ...(series.length ? { series } : {}),
    };
  } finally {
    svc.child.kill('SIGTERM');
    await new Promise((res) => svc.child.once('exit', res));
    fs.rmSync(svc.dataDir, { recursive: true, force: true });
  }
}

for (let i = 0; i < rounds; i++) {
  for (const v of variants) {
    const ceiling = await bare();
    const s = await service(v);
    console.log(
      JSON.stringify({
        node: process.version,
        variant: v,
        vsBareFastify: Math.round((s.events100PerSecond / Math.max(1, ceiling)) * 1000) / 1000,
        events100PerSecond: Math.round(s.events100PerSecond),
        bareEvents100PerSecond: Math.round(ceiling),
        atStartMb: s.atStart,
        peakMb: s.peak,
        ...(s.peakMaps ? { peakMapsMb: s.peakMaps } : {}),
        ...(s.series ? { bySecondMb: s.series } : {}),
      }),
    );
  }
}
