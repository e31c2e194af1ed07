/**
 * `npx tsx bench/outage.ts`: a ClickHouse outage under load, ridden through by the ingest spool
 * (issue 25). The service runs with ClickHouse out of process (the chDB-backed HTTP stand-in of
 * the tests) behind a TCP proxy; SDK-shaped load (the SDK's transport and retry policy) runs
 * paced (BENCH_OUTAGE_RPS, 200 requests/s) for BENCH_OUTAGE_LOAD_SECONDS, and from its 10th
 * second, for BENCH_OUTAGE_SECONDS (60 by default), every connection to ClickHouse is refused. Then the
 * proxy forwards again, the spool drains, the service stops (SIGTERM) and the stand-in's data is
 * counted: every acknowledged event and network row stored once. Prints the spool's bytes and
 * oldest body over time and the statuses the load saw. No crash reports in the mix: their
 * occurrences keep the synchronous path, answered 5xx while ClickHouse is away.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../scripts/freePort.ts';
import { TcpProxy } from '../test/reliability/tcpProxy.ts';
import { createBenchProject, scrapeMetrics, startBenchService } from './service.ts';
import type { LoadConfig, LoadResult } from './load.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const outageSeconds = Number(env.BENCH_OUTAGE_SECONDS ?? 60);
const loadSeconds = Number(env.BENCH_OUTAGE_LOAD_SECONDS ?? outageSeconds + 30);
const rps = Number(env.BENCH_OUTAGE_RPS ?? 200);
const log = (s: string) => process.stdout.write(`${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const exited = (c: ChildProcess) =>
  c.exitCode !== null ? Promise.resolve() : new Promise<void>((r) => c.once('exit', () => r()));

async function main() {
  const chDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-outage-ch-'));
  const chPort = await freePort();
  const shim = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'test/helpers/clickhouseShim.ts'), String(chPort), chDir],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    shim.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    shim.once('exit', (code) => reject(new Error(`ClickHouse stand-in exited with ${code}`)));
  });
  const proxy = new TcpProxy({ host: '127.0.0.1', port: chPort });
  await proxy.listen();
  const svc = await startBenchService({
    env: { CLICKHOUSE_URL: `http://127.0.0.1:${proxy.port}`, INGEST_SPOOL: 'true' },
  });
  try {
    const { apiKey } = await createBenchProject(svc, 'outage');
    log(
      `outage bench: ${rps} req/s for ${loadSeconds} s; ClickHouse connections refused from 10 s for ${outageSeconds} s`,
    );
    const child = fork(path.join(root, 'bench/load.ts'), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const result = new Promise<LoadResult>((resolve, reject) => {
      child.on('message', (m: { type: string; result?: LoadResult; message?: string }) => {
        if (m.type === 'done') resolve(m.result!);
        else if (m.type === 'error') reject(new Error(m.message));
      });
    });
    const lc: LoadConfig = {
      url: svc.url,
      apiKey,
      connections: 32,
      seconds: loadSeconds,
      mix: 'events100=80,events500=8,network200=10',
      batchesPerSession: 20,
      rps,
    };
    child.send(lc);
    const t0 = performance.now();
    const at = () => Math.round((performance.now() - t0) / 1000);
    let cut = false;
    let restored = false;
    const samples: { s: number; spoolMb: number; oldestS: number }[] = [];
    while (true) {
      const done = await Promise.race([result.then(() => true), sleep(1000).then(() => false)]);
      if (!cut && at() >= 10) {
        proxy.cut('refuse');
        cut = true;
        log(`${at()} s: ClickHouse connections refused`);
      }
      if (cut && !restored && at() >= 10 + outageSeconds) {
        proxy.restore();
        restored = true;
        log(`${at()} s: ClickHouse back`);
      }
      const m = await scrapeMetrics(svc.url);
      const spool = m.value('flightrec_spool_bytes');
      const oldest = m.value('flightrec_spool_oldest_unloaded_seconds');
      samples.push({ s: at(), spoolMb: Math.round(spool / 1e5) / 10, oldestS: Math.round(oldest * 10) / 10 });
      if (at() % 5 === 0)
        log(`${at()} s: spool ${samples.at(-1)!.spoolMb} MB, oldest unloaded body ${samples.at(-1)!.oldestS} s`);
      if (done) break;
    }
    if (!restored) proxy.restore();
    const r = await result;
    child.kill();
    const drain0 = performance.now();
    while ((await scrapeMetrics(svc.url)).value('flightrec_spool_bytes') > 0 && performance.now() - drain0 < 300_000)
      await sleep(200);
    log(`spool drained ${Math.round((performance.now() - drain0) / 100) / 10} s after the load ended`);
    svc.child.kill('SIGTERM');
    await exited(svc.child);
    shim.kill('SIGTERM');
    await exited(shim);
    const { openChdb } = await import('../src/stores/clickhouse/chdb.ts');
    const ch = await openChdb(chDir);
    const [ev] = await ch.query<{ rows: number; uniq: number }>(
      'SELECT count() AS rows, uniqExact(session_id, sequence_number) AS uniq FROM events FINAL',
    );
    const [nl] = await ch.query<{ rows: number; uniq: number }>(
      'SELECT count() AS rows, uniqExact(id) AS uniq FROM network_logs FINAL',
    );
    await ch.close();
    const statuses = Object.fromEntries(Object.entries(r.routes).map(([k, v]) => [k, v.statuses]));
    const verdict = (s: { rows: number; uniq: number }, acked: number, unacked: number) => ({
      acknowledged: acked,
      storedFinal: Number(s.rows),
      distinct: Number(s.uniq),
      unacknowledgedSent: unacked,
      ok: Number(s.rows) === Number(s.uniq) && Number(s.uniq) >= acked && Number(s.uniq) <= acked + unacked,
    });
    const out = {
      outageSeconds,
      loadSeconds,
      rps,
      statuses,
      p99ByRoute: Object.fromEntries(Object.entries(r.routes).map(([k, v]) => [k, v.latency.p99])),
      peakSpoolMb: Math.max(...samples.map((x) => x.spoolMb)),
      peakOldestSeconds: Math.max(...samples.map((x) => x.oldestS)),
      events: verdict(ev!, r.ackedEvents, r.unackedEvents),
      networkLogs: verdict(nl!, r.ackedNetworkRows, r.unackedNetworkRows),
    };
    log(JSON.stringify(out, null, 1));
    const dir = path.join(root, 'bench/results');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, `outage-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
      `${JSON.stringify({ ...out, samples }, null, 2)}\n`,
    );
    if (!out.events.ok || !out.networkLogs.ok) process.exitCode = 1;
  } finally {
    if (svc.child.exitCode === null) svc.child.kill('SIGKILL');
    if (shim.exitCode === null) shim.kill('SIGKILL');
    await proxy.close().catch(() => {});
    fs.rmSync(chDir, { recursive: true, force: true });
    fs.rmSync(svc.dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
