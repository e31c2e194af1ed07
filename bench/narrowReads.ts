/**
 * `npx tsx bench/narrowReads.ts`: what one session's reads cost the embedded engine on one thread
 * (NARROW_READ_SETTINGS, src/stores/clickhouse/port.ts) against the engine's own threads. Writes
 * BENCH_NARROW_PARTS inserts (default 200) into a fresh embedded ClickHouse through the ingest
 * table, each of events100 bodies of other sessions (BENCH_NARROW_BODIES per insert, default 10)
 * and one event of a probe session, with merges stopped: the probe's rows lie in every part, as a
 * live session's do under load. Then times the events repo's reads of the probe session (the
 * export's count and first page, the dashboard timeline) as shipped and with `max_threads` taken
 * out of their settings (the same SQL), alternating, and prints the median wall time and the
 * process CPU (every engine thread) per read.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openChdb } from '../src/stores/clickhouse/chdb.ts';
import type { ClickHouse, Settings } from '../src/stores/clickhouse/port.ts';
import { migrateClickHouse } from '../src/stores/migrations.ts';
import { ingestLine } from '../src/repos/ingestLines.ts';
import { eventsRepo } from '../src/repos/events.ts';
import { Client, Ids } from './traffic.ts';

const PARTS = Number(process.env.BENCH_NARROW_PARTS ?? 200);
const BODIES = Number(process.env.BENCH_NARROW_BODIES ?? 10);
const READS = Number(process.env.BENCH_NARROW_READS ?? 30);
const ROUNDS = Number(process.env.BENCH_NARROW_ROUNDS ?? 3);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-bench-narrow-'));
const ch = await openChdb(dir);
await migrateClickHouse(ch);
await ch.exec('SYSTEM STOP MERGES events');
const projectId = '00000000-0000-4000-8000-000000000001';
const probe = crypto.randomUUID();
const ids = new Ids();
const client = new Client(ids, Infinity);
client.sessionStart();
for (let p = 0; p < PARTS; p++) {
  const lines: Buffer[] = [];
  for (let b = 0; b < BODIES; b++) lines.push(ingestLine(projectId, Buffer.from(client.events('events100').json)));
  const event = { type: 'custom', sessionId: probe, timestamp: Date.now(), sequenceNumber: p, name: 'probe' };
  lines.push(ingestLine(projectId, Buffer.from(JSON.stringify({ sessionId: probe, events: [event] }))));
  await ch.insertBytes('ingest', Buffer.concat(lines), 'JSONEachRow');
}
const [parts] = await ch.query<{ n: number }>(
  "SELECT count() AS n FROM system.parts WHERE table = 'events' AND active AND database = currentDatabase()",
);
const [rows] = await ch.query<{ n: number }>('SELECT count() AS n FROM events');

/** The same port with `max_threads` taken out of every query's settings: the engine's own threads. */
function allThreads(inner: ClickHouse): ClickHouse {
  const strip = (s?: Settings) => {
    if (!s) return s;
    const { max_threads: _, ...rest } = s;
    return rest;
  };
  return {
    ...inner,
    query: (sql, params, settings) => inner.query(sql, params, strip(settings)),
    queryRaw: (sql, params, format, settings) => inner.queryRaw(sql, params, format, strip(settings)),
  };
}

const variants = { 'one thread (as shipped)': eventsRepo(ch), "the engine's threads": eventsRepo(allThreads(ch)) };
const reads = {
  'export count': (r: ReturnType<typeof eventsRepo>) => r.export.count(projectId, { sessionId: probe }),
  'export first page (100)': (r: ReturnType<typeof eventsRepo>) =>
    r.export.page(projectId, { sessionId: probe }, 0, 100),
  'dashboard timeline (50)': (r: ReturnType<typeof eventsRepo>) => r.timeline(projectId, probe, undefined, 50),
};

const out: Record<string, Record<string, { wallMsMedian: number[]; cpuMsPerRead: number[] }>> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const [read, run] of Object.entries(reads)) {
    for (const [name, repo] of Object.entries(variants)) {
      await run(repo);
      const walls: number[] = [];
      const c0 = process.cpuUsage();
      for (let i = 0; i < READS; i++) {
        const t0 = performance.now();
        await run(repo);
        walls.push(performance.now() - t0);
      }
      const c = process.cpuUsage(c0);
      walls.sort((a, b) => a - b);
      const byVariant = out[read] ?? {};
      out[read] = byVariant;
      const figure = byVariant[name] ?? { wallMsMedian: [], cpuMsPerRead: [] };
      byVariant[name] = figure;
      figure.wallMsMedian.push(Math.round((walls[Math.floor(READS / 2)] ?? 0) * 10) / 10);
      figure.cpuMsPerRead.push(Math.round(((c.user + c.system) / 1000 / READS) * 10) / 10);
    }
  }
}
console.log(
  `machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim()}), node ${process.version}; events: ${Number(rows?.n)} rows in ${Number(parts?.n)} parts, the probe session's ${PARTS} rows one in each; ${READS} reads a round, ${ROUNDS} rounds`,
);
for (const [read, byVariant] of Object.entries(out)) {
  console.log(read);
  console.table(byVariant);
}
await ch.close();
fs.rmSync(dir, { recursive: true, force: true });
