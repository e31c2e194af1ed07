/**
 * Ceiling (b): the store's own insert rate for the same rows, with no HTTP. Builds event rows
 * from the load generator's bodies with the service's own row mapping, then inserts them into
 * a fresh embedded ClickHouse (the project's port, `openChdb`) in batches of each size, timing
 * only the insert calls. Run as its own process: chDB binds one data directory per process.
 * Prints one JSON line: { "<batch size>": rows per second }.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openChdb } from '../src/stores/clickhouse/chdb.ts';
import { migrateClickHouse } from '../src/stores/migrations.ts';
import { toEventRow, type IngestEvent } from '../src/domain/eventRows.ts';
import { Client, Ids } from './traffic.ts';

const sizes = (process.env.BENCH_STORE_BATCHES ?? '100,500,10000').split(',').map(Number);
const secondsEach = Number(process.env.BENCH_STORE_SECONDS ?? 5);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-bench-store-'));
const ch = await openChdb(dir);
await migrateClickHouse(ch);
const projectId = '00000000-0000-4000-8000-000000000001';
const ids = new Ids();

function rows(n: number, client: Client) {
  const out = [];
  while (out.length < n) {
    const body = JSON.parse(client.events('events100').json) as { events: IngestEvent[] };
    for (const e of body.events) out.push(toEventRow(projectId, e));
  }
  return out.slice(0, n);
}

const result: Record<string, number> = {};
for (const size of sizes) {
  let inserted = 0;
  let busyMs = 0;
  const client = new Client(ids, Infinity);
  client.sessionStart();
  while (busyMs < secondsEach * 1000) {
    const batch = rows(size, client);
    const t0 = performance.now();
    await ch.insert('events', batch);
    busyMs += performance.now() - t0;
    inserted += batch.length;
  }
  result[size] = Math.round(inserted / (busyMs / 1000));
}
await ch.close();
fs.rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify(result));
