/**
 * Export benchmark: starts the service in a child process on a temporary DATA_DIR (embedded
 * chDB + PGlite) as the benches start it (bench/service.ts: `npm start`'s settings), loads
 * network-log rows through the real POST /ingest/network route (batches of 200), then pulls
 * them back with stream=true as CSV, NDJSON, gzipped CSV and Parquet (one file, its footer read
 * back with hyparquet), measuring rows/s, time to first byte and the
 * server's peak RSS during each export. Then it stops the service and, in a process started as
 * the service is (its flags and environment), opens the same ClickHouse data directory for the
 * ceilings of the same rows in the same run: one
 * query of every row in the export's own format (`pageEncoded`: FINAL, in key order, the same
 * SELECT list), and the chunk generator alone (`chunks`: the stream's queries, no HTTP), each
 * with its wall time and the process CPU (every engine thread) per row.
 *
 *   npm run bench:export                 # 1,000,000 rows
 *   BENCH_ROWS=200000 npm run bench:export
 *   BENCH_CPU_PROF_DIR=/tmp/prof npm run bench:export   # the service under node --cpu-prof
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { parquetMetadata } from 'hyparquet';
import { procSample, statusMb } from './procStats.ts';
import { createBenchProject, jsSide, spawnLikeService, startBenchService } from './service.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const BATCH = 200;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const T0 = 1_767_225_600_000;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Resets the kernel's peak-RSS mark (VmHWM) of a process we own (proc(5), clear_refs "5"). */
function resetPeak(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

const mb = (b: number) => (b / 1024 / 1024).toFixed(1);

async function main() {
  // As `npm start` runs it (its thread pool and glibc's settings), with no servers and no worker.
  const svc = await startBenchService({
    env: {
      RUN_WORKER: 'false',
      RATE_LIMIT_EXPORT_PER_MIN: '1000',
      DATABASE_URL: '',
      CLICKHOUSE_URL: '',
      REDIS_URL: '',
    },
    dataDirPrefix: 'flightrec-bench-export-',
  });
  const { child, dataDir, url: base } = svc;
  const pid = child.pid ?? 0;
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  process.on('exit', stop);

  try {
    const created = await createBenchProject(svc, 'bench');
    const auth = { authorization: `Bearer ${created.apiKey}` };
    const sessions = Array.from({ length: 100 }, () => randomUUID());
    for (const id of sessions) {
      await fetch(`${base}/ingest/session`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({
          sessionId: id,
          startedAt: T0,
          device: { platform: 'android', appVersion: '3.1.0', networkType: 'wifi' },
        }),
      });
    }

    // Load through the real route.
    const batches = Math.ceil(ROWS / BATCH);
    let next = 0;
    const loadStart = performance.now();
    const worker = async () => {
      for (let b = next++; b < batches; b = next++) {
        const n = Math.min(BATCH, ROWS - b * BATCH);
        const requests = Array.from({ length: n }, (_, i) => {
          const k = b * BATCH + i;
          const status = k % 50 === 0 ? 500 : k % 17 === 0 ? 404 : 200;
          return {
            id: randomUUID(),
            method: k % 3 === 0 ? 'POST' : 'GET',
            url: `https://api.example.com/v1/items/${k}?page=${k % 7}&q=search%20term`,
            statusCode: status,
            duration: 20 + (k % 900),
            requestSize: 200 + (k % 100),
            responseSize: 1000 + (k % 5000),
            error: k % 101 === 0 ? 'timeout, "retrying"' : null,
            timestamp: T0 + k * 10,
          };
        });
        const r = await fetch(`${base}/ingest/network`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ sessionId: sessions[b % sessions.length], requests }),
        });
        if (r.status !== 201) throw new Error(`ingest failed: ${r.status} ${await r.text()}`);
        await r.arrayBuffer();
        if (b % 500 === 0) process.stdout.write(`\rloaded ${(b * BATCH).toLocaleString()} rows`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const loadSec = (performance.now() - loadStart) / 1000;
    process.stdout.write(
      `\rloaded ${ROWS.toLocaleString()} rows in ${loadSec.toFixed(1)} s (${Math.round(ROWS / loadSec).toLocaleString()} rows/s)\n`,
    );

    // With the ingest spool a 201 means durable, visible within seconds (the loader's next insert).
    let total = 0;
    for (
      const until = Date.now() + 30_000;
      total !== ROWS && Date.now() < until;
      await new Promise((r) => setTimeout(r, 250))
    ) {
      total = ((await (await fetch(`${base}/export/network?limit=1`, { headers: auth })).json()) as { total: number })
        .total;
    }
    if (total !== ROWS) throw new Error(`expected ${ROWS} rows, export total is ${total}`);

    const runs: Record<string, unknown>[] = [];
    for (const c of [
      { name: 'csv', format: 'csv', gzip: false },
      { name: 'ndjson', format: 'ndjson', gzip: false },
      { name: 'csv+gzip', format: 'csv', gzip: true },
      { name: 'parquet', format: 'parquet', gzip: false },
    ]) {
      const rssBefore = procStatus(pid, 'VmRSS');
      const peakReset = resetPeak(pid);
      // What the highest sample was made of: anonymous and file-backed pages, and the JS side.
      // The first sample always counts, so an export that never grows the RSS still gets one.
      let peakSampled = -1;
      let atPeak: Record<string, number> = {};
      let jsAtPeak: Promise<Record<string, number>> | undefined;
      const sample = () => {
        const st = statusMb(pid);
        if ((st.VmRSS ?? 0) * 1048576 <= peakSampled) return;
        peakSampled = (st.VmRSS ?? 0) * 1048576;
        atPeak = st;
        jsAtPeak ??= jsSide(base).finally(() => {
          jsAtPeak = undefined;
        });
        jsAtPeak.then((js) => Object.assign(atPeak, js)).catch(() => {});
      };
      sample();
      const sampler = setInterval(sample, 25);
      const cpuBefore = procSample(pid)?.cpuSec ?? NaN;
      const start = performance.now();
      const parquet: Buffer[] = [];
      const r = await new Promise<{ ttfbMs: number; bytes: number; lines: number; status: number }>(
        (resolve, reject) => {
          const headers: Record<string, string> = { ...auth, ...(c.gzip ? { 'accept-encoding': 'gzip' } : {}) };
          http
            .get(`${base}/export/network?stream=true&format=${c.format}`, { headers }, (res) => {
              let ttfbMs = -1,
                bytes = 0,
                lines = 0;
              const body = c.gzip ? res.pipe(zlib.createGunzip()) : res;
              res.on('data', (d: Buffer) => {
                if (ttfbMs < 0) ttfbMs = performance.now() - start;
                bytes += d.length;
              });
              body.on('data', (d: Buffer) => {
                if (c.format === 'parquet') parquet.push(d);
                else for (let i = d.indexOf(10); i !== -1; i = d.indexOf(10, i + 1)) lines++;
              });
              body.on('end', () =>
                res.complete
                  ? resolve({ ttfbMs, bytes, lines, status: res.statusCode ?? 0 })
                  : reject(new Error('incomplete')),
              );
              res.on('error', reject);
            })
            .on('error', reject);
        },
      );
      const totalSec = (performance.now() - start) / 1000;
      const serverCpuSec = (procSample(pid)?.cpuSec ?? NaN) - cpuBefore;
      clearInterval(sampler);
      // A JS-side read started at the last peak lands before the row is written.
      await jsAtPeak?.catch(() => undefined);
      // A Parquet file's row count is in its footer: reading it also checks the file is whole.
      const whole = Buffer.concat(parquet);
      const rows =
        c.format === 'parquet'
          ? Number(
              parquetMetadata(whole.buffer.slice(whole.byteOffset, whole.byteOffset + whole.byteLength) as ArrayBuffer)
                .num_rows,
            )
          : c.format === 'csv'
            ? r.lines - 1
            : r.lines;
      if (rows !== ROWS) throw new Error(`${c.name}: got ${rows} rows, expected ${ROWS}`);
      const peak = peakReset ? procStatus(pid, 'VmHWM') : peakSampled;
      runs.push({
        export: c.name,
        rows,
        seconds: +totalSec.toFixed(2),
        rowsPerSec: Math.round(rows / totalSec),
        ttfbMs: Math.round(r.ttfbMs),
        // The service's CPU (JS thread, engine threads, gzip) per row: steadier than rows/s on a shared machine.
        serverCpuUsPerRow: +((serverCpuSec * 1e6) / rows).toFixed(2),
        bytesOnWire: r.bytes,
        rssBeforeMB: +mb(rssBefore),
        peakRssMB: +mb(Math.max(peak, peakSampled, rssBefore)),
        peakSource: peakReset ? 'VmHWM after reset' : 'VmRSS sampled every 25 ms',
        atPeakMB: {
          anon: atPeak.RssAnon,
          file: atPeak.RssFile,
          heapTotal: atPeak.heapTotal,
          external: atPeak.external,
        },
      });
    }

    // The ceilings: the same rows, read by the same engine on the same data directory.
    stop();
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    const ceilings = await ceilingsInChild(path.join(dataDir, 'clickhouse'), created.projectId, svc.adminToken);
    for (const r of runs) {
      const c = ceilings.find((x) => x.format === (r.export === 'csv+gzip' ? 'csv' : r.export));
      if (c) {
        r.ofOneQuery = +((r.rowsPerSec as number) / c.oneQuery.rowsPerSec).toFixed(3);
        r.ofChunks = +((r.rowsPerSec as number) / c.chunks.rowsPerSec).toFixed(3);
        r.cpuOfOneQuery = +((r.serverCpuUsPerRow as number) / c.oneQuery.cpuUsPerRow).toFixed(2);
      }
    }

    const machine = {
      nproc: os.availableParallelism(),
      cpu: os.cpus()[0]?.model ?? 'unknown',
      memTotalGB: +(os.totalmem() / 2 ** 30).toFixed(1),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
    };
    const result = {
      date: new Date().toISOString(),
      machine,
      rowsLoaded: ROWS,
      load: {
        seconds: +loadSec.toFixed(1),
        rowsPerSec: Math.round(ROWS / loadSec),
        batch: BATCH,
        concurrency: CONCURRENCY,
      },
      loadAverage: os.loadavg(),
      runs,
      ceilings,
    };
    console.log(`\nmachine: ${machine.nproc} CPUs (${machine.cpu}), ${machine.memTotalGB} GB, node ${machine.node}`);
    console.table(
      runs.map((x) => ({
        export: x.export,
        rows: x.rows,
        s: x.seconds,
        'rows/s': x.rowsPerSec,
        'TTFB ms': x.ttfbMs,
        'MB on wire': +mb(x.bytesOnWire as number),
        'RSS before MB': x.rssBeforeMB,
        'peak RSS MB': x.peakRssMB,
        'server µs CPU/row': x.serverCpuUsPerRow,
        'CPU × one query': x.cpuOfOneQuery,
        'rows/s × one query': x.ofOneQuery,
      })),
    );
    console.log('the highest RSS sample of each export, by kind (MB; the JS side read just after it):');
    console.table(runs.map((x) => ({ export: x.export, ...(x.atPeakMB as object) })));
    console.table(
      ceilings.flatMap((c) => [
        { ceiling: `${c.format}: one query`, ...c.oneQuery },
        { ceiling: `${c.format}: chunks, no HTTP`, ...c.chunks },
      ]),
    );
    const outDir = path.join(root, 'bench/results');
    fs.mkdirSync(outDir, { recursive: true });
    const file = path.join(outDir, `export-${result.date.replace(/[:.]/g, '-')}.json`);
    fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`written ${path.relative(root, file)}`);
  } finally {
    stop();
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

interface Timed {
  seconds: number;
  rowsPerSec: number;
  cpuUsPerRow: number;
  MB: number;
}

async function timed(f: () => Promise<number>): Promise<Timed> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const bytes = await f();
  const seconds = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return {
    seconds: +seconds.toFixed(2),
    rowsPerSec: Math.round(ROWS / seconds),
    cpuUsPerRow: +((c.user + c.system) / ROWS).toFixed(2),
    MB: +mb(bytes),
  };
}

type Ceilings = Awaited<ReturnType<typeof ceilingsOf>>;

/**
 * The ceilings in a process started as the service is (`spawnLikeService`): glibc's malloc
 * thresholds alone took the chunk read from 677k–875k to 384k–423k CSV rows/s (docs/bench.md,
 * "Third session of 2026-12-07"), so each export is compared with the engine under its own settings.
 */
function ceilingsInChild(chDir: string, projectId: string, adminToken: string): Promise<Ceilings> {
  const child = spawnLikeService(fileURLToPath(import.meta.url), {
    env: { BENCH_CEILINGS_OF: JSON.stringify({ chDir, projectId, adminToken }) },
    stdout: 'pipe',
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as Ceilings)
        : reject(new Error(`ceilings exited ${code}`)),
    );
  });
}

/** Per format: one query of every row (the engine's own rate) and the stream's chunks without HTTP. */
async function ceilingsOf(chDir: string, projectId: string, adminToken: string) {
  const { openChdb } = await import('../src/stores/clickhouse/chdb.ts');
  const { networkLogsRepo } = await import('../src/repos/networkLogs.ts');
  const { loadConfig } = await import('../src/config.ts');
  const config = loadConfig({ ADMIN_TOKEN: adminToken });
  const ch = await openChdb(chDir);
  const repo = networkLogsRepo(ch).export;
  const size = { rows: config.exportChunkRows, bytes: config.exportChunkBytes };
  const out = [];
  try {
    for (const format of ['csv', 'ndjson', 'parquet'] as const) {
      const oneQuery = await timed(async () =>
        Buffer.byteLength(await repo.pageEncoded(projectId, {}, 0, ROWS, format)),
      );
      const chunks = await timed(async () => {
        let n = 0;
        for await (const c of repo.chunks(projectId, {}, format, size)) n += Buffer.byteLength(c);
        return n;
      });
      out.push({ format, oneQuery, chunks });
    }
  } finally {
    await ch.close();
  }
  return out;
}

const ceilingsOfArgs = process.env.BENCH_CEILINGS_OF;
(ceilingsOfArgs
  ? (async () => {
      const a = JSON.parse(ceilingsOfArgs) as { chDir: string; projectId: string; adminToken: string };
      console.log(JSON.stringify(await ceilingsOf(a.chDir, a.projectId, a.adminToken)));
    })()
  : main()
).catch((err) => {
  console.error(err);
  process.exit(1);
});
