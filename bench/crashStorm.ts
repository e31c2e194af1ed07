/**
 * `npx tsx bench/crashStorm.ts`: a crash storm, one crash group reported by many clients at once
 * (or, with BENCH_GROUPS, many: a bad release minting groups).
 *
 * The service runs as a child process on a temporary DATA_DIR (embedded stores), or on the
 * machine's Postgres when BENCH_PG_ADMIN_URL is set (a scratch database is created and dropped).
 * BENCH_CONNECTIONS clients (undici connections, pipelining off, closed loop) each own a session
 * and post `/ingest/crash` for one and the same stack trace for BENCH_SECONDS; every report is a
 * new occurrence (its timestamp differs). Prints reports/s acknowledged, latency percentiles and
 * errors; then, as a 201 means durable and not yet visible (crashes go through the spool unless
 * INGEST_SPOOL=false), waits until the group counts every acknowledged report, prints how long
 * after the storm that was, and checks each was counted once.
 *
 * | env | default | meaning |
 * | BENCH_SECONDS | 10 | storm duration |
 * | BENCH_CONNECTIONS | 64 | concurrent clients, one session each |
 * | BENCH_PG_ADMIN_URL | – | Postgres admin URL: run on a scratch database there instead of PGlite |
 * | BENCH_GROUPS | 1 | distinct stacks the reports cycle through; `new`: every report a stack of its own (a new group each) |
 * | BENCH_SOURCEMAP | – | `1`: one minified stack whose release has its source map uploaded, so every report is symbolicated (one group) |
 * | BENCH_VISIBLE_TIMEOUT_S | 120 | how long to wait for the loader to record every acknowledged report |
 * | INGEST_SPOOL | – | `false`: crashes recorded inside the request (the path before the crash spool) |
 * | REDIS_URL, CLICKHOUSE_URL | – | passed to the service as they are |
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { Pool } from 'undici';
import { Latencies } from './stats.ts';
import { ProcWatcher } from './procStats.ts';
import { createDatabase, dropDatabase } from '../scripts/databases.ts';
import { createBenchProject, scrapeMetrics, startBenchService } from './service.ts';
import { BUNDLE_NAME, minifiedStorm } from './stormSourceMap.ts';

const env = process.env;
const seconds = Number(env.BENCH_SECONDS ?? 10);
const connections = Number(env.BENCH_CONNECTIONS ?? 64);
const pgAdmin = env.BENCH_PG_ADMIN_URL;
const groupsMode = env.BENCH_GROUPS ?? '1';
const everyNew = groupsMode === 'new';
const groupCount = everyNew ? Infinity : Math.max(1, Number(groupsMode));
const symbolicated = env.BENCH_SOURCEMAP === '1';
if (symbolicated && groupsMode !== '1')
  throw new Error('BENCH_SOURCEMAP=1 storms one group (leave BENCH_GROUPS unset)');
const RELEASES = ['1.0.0', '1.1.0', '1.2.0', '1.3.0'];

/** A number in letters g-z: the group key reads digits and hex in a frame as variable, not these. */
const letters = (n: number) => {
  let out = '';
  do {
    out += 'ghijklmnopqrstuvwxyz'[n % 20];
    n = Math.floor(n / 20);
  } while (n > 0);
  return out;
};

async function main() {
  const dbName = `flightrec_storm_${Date.now()}_${process.pid}`;
  let databaseUrl: string | undefined;
  if (pgAdmin) {
    await createDatabase(pgAdmin, dbName);
    const u = new URL(pgAdmin);
    u.pathname = `/${dbName}`;
    databaseUrl = u.toString();
  }
  const svc = await startBenchService({
    dataDirPrefix: 'flightrec-storm-',
    env: {
      LOG_LEVEL: 'warn',
      RUN_WORKER: 'false',
      // the groups are read back page by page until every report is counted (thousands of pages with BENCH_GROUPS=new)
      RATE_LIMIT_EXPORT_PER_MIN: '1000000',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    },
  });
  const { url, child } = svc;
  try {
    const { apiKey, projectId } = await createBenchProject(svc, 'crash storm');
    const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };

    const pool = new Pool(url, { connections, pipelining: 1 });
    const post = async (p: string, body: unknown) => {
      const r = await pool.request({ path: p, method: 'POST', headers: auth, body: JSON.stringify(body) });
      await r.body.dump();
      return r.statusCode;
    };
    const sessions = await Promise.all(
      Array.from({ length: connections }, async (_, i) => {
        const sessionId = randomUUID();
        const status = await post('/ingest/session', {
          sessionId,
          startedAt: Date.now(),
          device: {
            platform: i % 2 ? 'android' : 'ios',
            osVersion: '17.2',
            appVersion: RELEASES[i % RELEASES.length],
            model: `model ${i % 16}`,
          },
        });
        if (status !== 201) throw new Error(`session start: ${status}`);
        return sessionId;
      }),
    );

    // With a source map, every release the sessions run has it: each report is read through it.
    const minified = symbolicated ? await minifiedStorm() : undefined;
    if (minified) {
      for (const release of RELEASES) {
        const r = await fetch(
          `${url}/api/projects/${projectId}/releases/${release}/artifacts?name=${BUNDLE_NAME}.map`,
          { method: 'POST', headers: { authorization: `Bearer ${svc.adminToken}` }, body: minified.map },
        );
        if (r.status !== 201) throw new Error(`source map upload: ${r.status} ${await r.text()}`);
      }
    }
    const stackOf = (g: number) =>
      minified?.stack ??
      `TypeError: x is undefined\n  at render${g === 0 ? '' : letters(g)} (app.js:10:5)\n  at update (app.js:20:3)\n  at loop (app.js:30:1)\n  at main (app.js:40:1)`;
    const used = new Set<number>();
    let nextGroup = 0;
    const lat = new Latencies();
    const statuses: Record<string, number> = {};
    let acked = 0;
    let ts = Date.now();
    const watcher = new ProcWatcher(child.pid!);
    watcher.start();
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    await Promise.all(
      sessions.map(async (sessionId) => {
        while (performance.now() < end) {
          const s = performance.now();
          let status: number;
          const g = everyNew ? nextGroup++ : nextGroup++ % groupCount;
          try {
            status = await post('/ingest/crash', {
              sessionId,
              message: 'TypeError: x is undefined',
              stackTrace: stackOf(g),
              isFatal: false,
              handled: true,
              timestamp: ts++,
            });
          } catch {
            status = 0;
          }
          lat.add(performance.now() - s);
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status === 201) {
            acked++;
            used.add(g);
          }
        }
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;
    watcher.stop();

    // With the spool (the default) a 201 means durable: the loader records the reports after it.
    // The export shows the one group; waited for until it counts every acknowledged report (or
    // BENCH_VISIBLE_TIMEOUT_S passes), which also measures how long the loader trails the storm.
    type Group = { id: string; occurrenceCount: number; affectedDevices: number };
    type Page = { data: Group[]; total: number };
    const page = async (n: number, limit: number) => {
      const ex = await fetch(`${url}/export/crashes?limit=${limit}&page=${n}`, { headers: auth });
      if (ex.status !== 200) throw new Error(`/export/crashes page ${n}: ${ex.status} ${await ex.text()}`);
      return (await ex.json()) as Page;
    };
    /** Every group (the export's pages of 1000). */
    const readGroups = async () => {
      const first = await page(1, 1000);
      const all = [...first.data];
      for (let n = 2; all.length < first.total; n++) all.push(...(await page(n, 1000)).data);
      return all;
    };
    const expectedGroups = used.size;
    const stormEnd = performance.now();
    const visibleDeadline = stormEnd + Number(env.BENCH_VISIBLE_TIMEOUT_S ?? 120) * 1000;
    // Waited for on the spool's gauge first: the export's reads share the embedded Postgres's one
    // connection with the loader, so polling them would slow what is measured (a page and its
    // total at 30k groups cost the engine ~180 ms, polled every 100 ms).
    while ((await scrapeMetrics(url)).value('flightrec_crash_spool_bytes') > 0 && performance.now() < visibleDeadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    // Then checked in the export: every group there (the total alone), every occurrence counted.
    while ((await page(1, 1)).total < expectedGroups && performance.now() < visibleDeadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const sum = (gs: Group[]) => gs.reduce((n, g) => n + g.occurrenceCount, 0);
    let groups = await readGroups();
    while (sum(groups) < acked && performance.now() < visibleDeadline) {
      await new Promise((r) => setTimeout(r, 100));
      groups = await readGroups();
    }
    const visibleAfterSeconds = Math.round((performance.now() - stormEnd) / 100) / 10;
    // Where a batch's time went: the recording steps' histograms (src/pipeline/recordCrashes/;
    // absent with INGEST_SPOOL=false, where the request records and nothing times the steps).
    const metrics = await scrapeMetrics(url);
    const stepSeries = (step: string, part: 'sum' | 'count') =>
      metrics.value(`flightrec_pipeline_step_duration_seconds_${part}{pipeline="crash",step="${step}",outcome="ok"}`) ||
      0;
    const batchSteps = Object.fromEntries(
      ['record.read', 'record.group', 'record.store', 'record.decide'].map((step) => {
        const [sum, batches] = [stepSeries(step, 'sum'), stepSeries(step, 'count')];
        return [
          step,
          {
            batches,
            meanMs: batches ? Math.round((sum / batches) * 10_000) / 10 : null,
            totalS: Math.round(sum * 100) / 100,
          },
        ];
      }),
    );
    // with a source map, the group's head frames as the map reads them (the original file and line)
    const headOf = async (groupId: string) => {
      const r = await fetch(`${url}/api/projects/${projectId}/crash-groups/${groupId}`, {
        headers: { authorization: `Bearer ${svc.adminToken}` },
      });
      return String(((await r.json()) as { stackHead?: string }).stackHead);
    };
    const head = minified && groups[0] ? await headOf(groups[0].id) : undefined;
    await pool.close();
    const l = lat.summary();
    const result = {
      shape: databaseUrl ? 'postgres+chdb' : 'embedded',
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model,
        loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
      },
      connections,
      seconds: Math.round(elapsed * 10) / 10,
      reportsPerSecond: Math.round(acked / elapsed),
      // every acknowledged report recorded, from the storm's start to the last one visible
      recordedPerSecond: Math.round(acked / (elapsed + visibleAfterSeconds)),
      visibleAfterSeconds,
      latencyMs: l,
      statuses,
      serverCpuCores: Math.round(watcher.cpuCores() * 100) / 100,
      groupsMode,
      groups: groups.length,
      // new groups made per second, from the storm's start to the last one visible
      newGroupsPerSecond: Math.round(groups.length / (elapsed + visibleAfterSeconds)),
      occurrenceCount: sum(groups),
      affectedDevices: groups.length === 1 ? groups[0]?.affectedDevices : undefined,
      exactlyOnce: groups.length === expectedGroups && sum(groups) === acked,
      batchSteps,
      // with a source map: its first frame read back to the original file and line
      symbolicated: head === undefined ? undefined : groups.length === 1 && /src\/app\.js:2:\d+/.test(head),
      project: projectId,
    };
    const shape = everyNew
      ? 'a new stack per report'
      : minified
        ? 'one minified stack, symbolicated by its source map'
        : groupCount === 1
          ? 'one stack trace'
          : `${groupCount} stacks`;
    console.log(`crash storm (${result.shape}): ${connections} connections, ${result.seconds} s, ${shape}`);
    console.log(
      `  ${result.reportsPerSecond} reports/s acknowledged (${acked}), latency p50 ${l.p50} ms, p95 ${l.p95} ms, p99 ${l.p99} ms, max ${l.max} ms`,
    );
    console.log(
      `  statuses ${JSON.stringify(statuses)}; server CPU ${result.serverCpuCores} cores; load average ${result.machine.loadavg.join(' ')}`,
    );
    console.log(
      `  recorded: all ${result.visibleAfterSeconds} s after the storm (${result.recordedPerSecond} reports/s end to end)`,
    );
    console.log(
      `  groups ${result.groups} (${result.newGroupsPerSecond} new groups/s end to end), occurrences ${result.occurrenceCount}, affectedDevices ${result.affectedDevices ?? '-'}; exactly once: ${result.exactlyOnce}${head === undefined ? '' : `; symbolicated: ${result.symbolicated}\n  ${head.replaceAll('\n', '\n  ')}`}`,
    );
    console.log(
      `  a batch's steps (mean ms, total s, batches): ${Object.entries(batchSteps)
        .map(([step, x]) => `${step} ${x.meanMs} ms (${x.totalS} s, ${x.batches})`)
        .join('; ')}`,
    );
    console.log(JSON.stringify(result));
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    fs.rmSync(svc.dataDir, { recursive: true, force: true });
    if (pgAdmin) await dropDatabase(pgAdmin, dbName);
  }
}

await main();
