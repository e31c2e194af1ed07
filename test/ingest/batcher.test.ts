import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openChdb } from '../../src/stores/clickhouse/chdb.ts';
import { InsertBatcher, QueueBudget, RowsRefusedError, StoreDownError } from '../../src/stores/clickhouse/batcher.ts';
import { QueueFullError } from '../../src/domain/errors.ts';
import type { ClickHouse } from '../../src/stores/clickhouse/port.ts';

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
    const ch: ClickHouse = {
      ...engine,
      insertBytes: (...a) => {
        inserts += 1;
        return engine.insertBytes(...a);
      },
    };
    const batcher = new InsertBatcher(ch, 't', new QueueBudget(1 << 20), {
      maxBatchRows: 1000,
      maxQueuedRows: 1000,
      maxConcurrent: 1,
    });
    // The first request goes alone (nothing in flight); the next 32 gather behind it as one batch.
    const first = batcher.add(Buffer.from('{"n":0}\n'), 1);
    const rest = Array.from({ length: 32 }, (_, i) =>
      batcher.add(Buffer.from(i === 19 ? '{"n":"not a number"}\n' : `{"n":${i + 1}}\n`), 1).then(
        () => 'ok',
        () => 'failed',
      ),
    );
    await first;
    const outcome = await Promise.all(rest);
    expect(outcome.filter((o) => o === 'failed')).toHaveLength(1);
    expect(outcome[19]).toBe('failed');
    const rows = await engine.query<{ n: number }>('SELECT n FROM t ORDER BY n');
    expect(rows.map((r) => Number(r.n))).toEqual([
      0,
      ...Array.from({ length: 32 }, (_, i) => i + 1).filter((n) => n !== 20),
    ]);
    // 1 (first) + 1 (the shared batch) + 2 per level down to the bad one (32 → 16 → … → 1: 10)
    expect(inserts).toBeLessThanOrEqual(2 + 2 * Math.ceil(Math.log2(32)));
  });
});

describe('background inserts (a loader keeping up)', () => {
  it("a loader's batch goes in the background, a request's never, nor a batch a request shares", async () => {
    await engine.exec('CREATE TABLE IF NOT EXISTS bg (n UInt64) ENGINE = MergeTree ORDER BY n');
    const seen: (boolean | undefined)[] = [];
    let release!: () => void;
    let gate: Promise<void> = Promise.resolve();
    // the real engine, with each insert's options kept and, while `gate` is pending, held
    const ch: ClickHouse = {
      ...engine,
      insertBytes: async (table, bytes, format, opts) => {
        seen.push(opts?.background);
        await gate;
        return engine.insertBytes(table, bytes, format, opts);
      },
    };
    const batcher = new InsertBatcher(ch, 'bg', new QueueBudget(1 << 20), {
      maxBatchRows: 1000,
      maxQueuedRows: 1000,
      maxConcurrent: 1,
    });
    const line = (n: number) => ({ chunks: [Buffer.from(`{"n":${n}}\n`)], rows: 1 });
    await Promise.all(batcher.addAll([line(1), line(2)], { background: true }));
    await batcher.add(Buffer.from('{"n":3}\n'), 1);
    await Promise.all(batcher.addAll([line(4)]));
    // A loader's lines and a request's queued behind a held insert share the next batch.
    await batcher.drain();
    gate = new Promise<void>((r) => (release = r));
    const held = batcher.add(Buffer.from('{"n":5}\n'), 1);
    const shared = [...batcher.addAll([line(6)], { background: true }), batcher.add(Buffer.from('{"n":7}\n'), 1)];
    release();
    await Promise.all([held, ...shared]);
    expect(seen).toEqual([true, false, false, false, false]);
    const rows = await engine.query<{ n: number }>('SELECT n FROM bg ORDER BY n');
    expect(rows.map((r) => Number(r.n))).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it.runIf(process.platform === 'linux')(
    "runs the embedded engine's threads at nice 3 for the insert's duration only",
    async () => {
      await engine.exec('CREATE TABLE IF NOT EXISTS nice (n UInt64, s String) ENGINE = MergeTree ORDER BY n');
      // Enough rows that the insert runs for a while, sampled every millisecond from this thread
      // while the engine works on its own; an insert over before a sample is tried again.
      const bytes = Buffer.from(
        Array.from({ length: 300_000 }, (_, i) => `{"n":${i},"s":"${'x'.repeat(i % 40)}"}\n`).join(''),
      );
      const niceOf = (tid: string): number | undefined => {
        try {
          const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
          // field 19 (nice), counted after the name's closing parenthesis
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
        } catch {
          return undefined; // a thread that ended between the listing and the read
        }
      };
      const during = async (background: boolean): Promise<Set<number>> => {
        const nices = new Set<number>();
        const sample = () => {
          for (const tid of fs.readdirSync('/proc/self/task')) {
            const n = niceOf(tid);
            if (n !== undefined) nices.add(n);
          }
        };
        const timer = setInterval(sample, 1);
        try {
          await engine.insertBytes('nice', bytes, 'JSONEachRow', { background });
        } finally {
          clearInterval(timer);
        }
        return nices;
      };
      expect(await during(false)).not.toContain(3);
      let background = await during(true);
      for (let tries = 1; tries < 5 && !background.has(3); tries++) background = await during(true);
      expect(background).toContain(3);
      // and every thread is back at its own priority once the insert has returned
      const after = fs.readdirSync('/proc/self/task').map(niceOf);
      expect(after).not.toContain(3);
    },
    60_000,
  );
});

describe('group commit: bounds, drain and typed failures', () => {
  it('refuses past its queued rows or bytes while an insert is in flight, and takes requests again once it drained', async () => {
    await engine.exec('CREATE TABLE IF NOT EXISTS q (n UInt64) ENGINE = MergeTree ORDER BY n');
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // the real engine, its first insert held until the test lets it go
    const ch: ClickHouse = {
      ...engine,
      insertBytes: async (...a) => {
        await gate;
        return engine.insertBytes(...a);
      },
    };
    const budget = new QueueBudget(64);
    const batcher = new InsertBatcher(ch, 'q', budget, { maxBatchRows: 1000, maxQueuedRows: 3, maxConcurrent: 1 });
    const first = batcher.add(Buffer.from('{"n":1}\n'), 1); // in flight, held
    const second = batcher.add([Buffer.from('{"n":'), Buffer.from('2'), Buffer.from('}\n')], 2); // queued, in pieces
    await expect(batcher.add(Buffer.from('{"n":3}\n{"n":4}\n'), 2)).rejects.toBeInstanceOf(QueueFullError); // rows: 2 + 2 > 3
    await expect(batcher.add(Buffer.from(`{"n":${'9'.repeat(60)}}\n`), 1)).rejects.toBeInstanceOf(QueueFullError); // bytes past 64
    expect(batcher.queuedRows).toBe(2);
    let drained = false;
    const drain = batcher.drain().then(() => (drained = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(drained).toBe(false);
    release();
    await Promise.all([first, second, drain]);
    expect(budget.bytes).toBe(0);
    expect(batcher.queuedRows).toBe(0);
    await batcher.add(Buffer.from('{"n":5}\n'), 1);
    const rows = await engine.query<{ n: number }>('SELECT n FROM q ORDER BY n');
    expect(rows.map((r) => Number(r.n))).toEqual([1, 2, 5]);
  });

  it('a store that does not answer fails every request of the insert with StoreDownError, once each; refused rows get RowsRefusedError', async () => {
    await engine.exec('CREATE TABLE IF NOT EXISTS o (n UInt64) ENGINE = MergeTree ORDER BY n');
    let down = true;
    let inserts = 0;
    const refuse = () => Promise.reject(new Error('connect ECONNREFUSED (injected outage)'));
    const ch: ClickHouse = {
      ...engine,
      insertBytes: (...a) => {
        inserts += 1;
        return down ? refuse() : engine.insertBytes(...a);
      },
      ping: () => (down ? refuse() : engine.ping()),
    };
    const batcher = new InsertBatcher(ch, 'o', new QueueBudget(1 << 20), {
      maxBatchRows: 1000,
      maxQueuedRows: 1000,
      maxConcurrent: 1,
    });
    const all = [
      batcher.add(Buffer.from('{"n":1}\n'), 1),
      ...[2, 3, 4, 5].map((n) => batcher.add(Buffer.from(`{"n":${n}}\n`), 1)),
    ];
    const outcomes = await Promise.allSettled(all);
    expect(outcomes.map((o) => o.status === 'rejected' && o.reason instanceof StoreDownError)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    // the first alone, then the other four together: no retry in halves against a store that is down
    expect(inserts).toBe(2);

    down = false;
    const good = batcher.add(Buffer.from('{"n":6}\n'), 1);
    const bad = batcher.add(Buffer.from('{"n":"x"}\n'), 1);
    await good;
    await expect(bad).rejects.toBeInstanceOf(RowsRefusedError);
    await batcher.drain();
    const rows = await engine.query<{ n: number }>('SELECT n FROM o ORDER BY n');
    expect(rows.map((r) => Number(r.n))).toEqual([6]);
  });

  it('addAll puts several entries into one insert', async () => {
    await engine.exec('CREATE TABLE IF NOT EXISTS m (n UInt64) ENGINE = MergeTree ORDER BY n');
    let inserts = 0;
    const ch: ClickHouse = {
      ...engine,
      insertBytes: (...a) => {
        inserts += 1;
        return engine.insertBytes(...a);
      },
    };
    const batcher = new InsertBatcher(ch, 'm', new QueueBudget(1 << 20), {
      maxBatchRows: 1000,
      maxQueuedRows: 1000,
      maxConcurrent: 1,
    });
    await Promise.all(batcher.addAll([1, 2, 3].map((n) => ({ chunks: [Buffer.from(`{"n":${n}}\n`)], rows: 1 }))));
    expect(inserts).toBe(1);
  });
});
