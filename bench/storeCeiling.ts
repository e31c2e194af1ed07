/**
 * Ceiling (b): the store's own cost for the same rows, with no HTTP. Renders the load
 * generator's `/ingest/events` bodies of 100 events and, one for every eight of those (the
 * default mix), its `/ingest/network` bodies of 200 requests, wraps each as the service's ingest
 * line (ingestLines.ts), and writes them into a fresh embedded ClickHouse through the project's
 * port (`openChdb`, `insertBytes` into `ingest`, whose materialized views fill `events` and
 * `network_logs`): in blocks of each size, one insert at a time, and once as one bulk insert of
 * everything (the engine's own bulk rate for these rows). Times the insert calls and takes the
 * process CPU (every engine thread) over them. Run as its own process: chDB binds one data
 * directory per process. Prints one JSON line (see `StoreCeiling`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openChdb } from '../src/stores/clickhouse/chdb.ts';
import { migrateClickHouse } from '../src/stores/migrations.ts';
import { ingestLine } from '../src/repos/ingestLines.ts';
import { Client, Ids } from './traffic.ts';

export interface StoreFigure {
  /** Stored rows (events + mirrored network logs) per second of insert calls. */
  rowsPerSecond: number;
  /** Process CPU (all engine threads) per stored row while inserting, µs. */
  cpuUsPerRow: number;
}
export interface StoreCeiling {
  /** By events per insert. */
  blocks: Record<string, StoreFigure>;
  /** Everything in one insert. */
  bulk: StoreFigure;
}

const sizes = (process.env.BENCH_STORE_BATCHES ?? '100,500,10000').split(',').map(Number);
const secondsEach = Number(process.env.BENCH_STORE_SECONDS ?? 5);
const bulkEvents = Number(process.env.BENCH_STORE_BULK_EVENTS ?? 200_000);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-bench-store-'));
const ch = await openChdb(dir);
await migrateClickHouse(ch);
const projectId = '00000000-0000-4000-8000-000000000001';
const ids = new Ids();

/** `events` events' worth of ingest lines (bodies of 100 events, and of 200 requests after every eighth), and the rows they store. */
function lines(events: number, client: Client): { bytes: Buffer; rows: number } {
  const out: Buffer[] = [];
  let rows = 0;
  for (let n = 0; n < events; n += 100) {
    const b = client.events('events100');
    out.push(ingestLine(projectId, Buffer.from(b.json)));
    rows += b.events + b.networkRows;
    if ((n / 100) % 8 === 7) {
      const r = client.network(200);
      out.push(ingestLine(projectId, Buffer.from(r.json)));
      rows += r.networkRows;
    }
  }
  return { bytes: Buffer.concat(out), rows };
}

async function timed(bytes: Buffer): Promise<{ ms: number; cpuUs: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await ch.insertBytes('ingest', bytes, 'JSONEachRow');
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpuUs: c.user + c.system };
}

const figure = (rows: number, ms: number, cpuUs: number): StoreFigure => ({
  rowsPerSecond: Math.round(rows / (ms / 1000)),
  cpuUsPerRow: Math.round((cpuUs / rows) * 100) / 100,
});

const blocks: Record<string, StoreFigure> = {};
for (const size of sizes) {
  let rows = 0;
  let ms = 0;
  let cpuUs = 0;
  const client = new Client(ids, Infinity);
  client.sessionStart();
  while (ms < secondsEach * 1000) {
    const batch = lines(Math.max(100, size), client);
    const t = await timed(batch.bytes);
    ms += t.ms;
    cpuUs += t.cpuUs;
    rows += batch.rows;
  }
  blocks[size] = figure(rows, ms, cpuUs);
}
const client = new Client(ids, Infinity);
client.sessionStart();
const all = lines(bulkEvents, client);
const t = await timed(all.bytes);
const result: StoreCeiling = { blocks, bulk: figure(all.rows, t.ms, t.cpuUs) };
await ch.close();
fs.rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify(result));
