import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openChdb } from '../src/stores/clickhouse/chdb.ts';
import { InsertBatcher, QueueBudget } from '../src/stores/clickhouse/batcher.ts';
import type { ClickHouse } from '../src/stores/clickhouse/port.ts';

// The group commit against the embedded engine: a batch that fails because of one request's
// lines is split until the bad request stands alone; everyone else's rows are written once.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-batcher-'));
const engine = await openChdb(dir);
await engine.exec('CREATE TABLE t (n UInt64) ENGINE = MergeTree ORDER BY n');
afterAll(async () => {
  await engine.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('group commit', () => {
  it('a failed shared insert is retried in halves: only the bad request fails, with about 2·log2(n) inserts', async () => {
    let inserts = 0;
    // the real engine, with its inserts counted
    const ch: ClickHouse = { ...engine, insertBytes: (...a) => ((inserts += 1), engine.insertBytes(...a)) };
    const batcher = new InsertBatcher(ch, 't', new QueueBudget(1 << 20), { maxBatchRows: 1000, maxQueuedRows: 1000, maxConcurrent: 1 });
    // The first request goes alone (nothing in flight); the next 32 gather behind it as one batch.
    const first = batcher.add(Buffer.from('{"n":0}\n'), 1);
    const rest = Array.from({ length: 32 }, (_, i) =>
      batcher.add(Buffer.from(i === 19 ? '{"n":"not a number"}\n' : `{"n":${i + 1}}\n`), 1).then(() => 'ok', () => 'failed'));
    await first;
    const outcome = await Promise.all(rest);
    expect(outcome.filter((o) => o === 'failed')).toHaveLength(1);
    expect(outcome[19]).toBe('failed');
    const rows = await engine.query<{ n: number }>('SELECT n FROM t ORDER BY n');
    expect(rows.map((r) => Number(r.n))).toEqual([0, ...Array.from({ length: 32 }, (_, i) => i + 1).filter((n) => n !== 20)]);
    // 1 (first) + 1 (the shared batch) + 2 per level down to the bad one (32 → 16 → … → 1: 10)
    expect(inserts).toBeLessThanOrEqual(2 + 2 * Math.ceil(Math.log2(32)));
  });
});
