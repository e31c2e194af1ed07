import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Spool, type SpoolSink } from '../../src/stores/spool/spool.ts';
import { HEADER_BYTES, payloadOf } from '../../src/stores/spool/records.ts';
import { sleep } from '../helpers/wait.ts';

// The crash path loads two batches at once (LOADS_IN_FLIGHT, src/pipeline/crashPipeline.ts): one
// batch's ClickHouse insert beside the other's Postgres transaction. The spool's lanes, on its
// real segment files.
const opts = (root: string, loadConcurrency: number) => ({
  root,
  instance: 'lanes',
  maxBytes: 64 * 1024 * 1024,
  // one small record per segment once a few are waiting: many loads, each of a few segments
  loadBytes: 64,
  loadIntervalMs: 5,
  staleMs: 30_000,
  loadConcurrency,
});

/** Appends `n` records, four at a time: each four fill a segment past `loadBytes`, which closes it. */
async function appendAll(spool: Spool, n: number): Promise<void> {
  for (let i = 0; i < n; i += 4) {
    await Promise.all(
      Array.from({ length: Math.min(4, n - i) }, (_, k) => spool.append([Buffer.from(`r${i + k}`)], 1)),
    );
  }
}

describe('spool loads in flight at once (loadConcurrency)', () => {
  it('two loads run together, every record is loaded once, and a failed load is tried again without losing or doubling', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spool-lanes-'));
    const loaded: string[] = [];
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    // The first load is held until a second one has started: with one lane it never would.
    let secondStarted: () => void = () => {};
    const second = new Promise<void>((r) => (secondStarted = r));
    const sink: SpoolSink = async (records) => {
      calls++;
      inFlight++;
      most = Math.max(most, inFlight);
      if (inFlight === 2) secondStarted();
      try {
        if (calls === 1) await Promise.race([second, sleep(10_000)]);
        // the third load fails once (a store away): its segments must be kept and loaded later
        if (calls === 3) throw new Error('store away');
        for (const r of records) loaded.push(payloadOf(r).toString());
        return { refused: [] };
      } finally {
        inFlight--;
      }
    };
    const spool = new Spool(opts(root, 2), sink);
    spool.start({ warn() {}, error() {} });
    await appendAll(spool, 60);
    expect(await spool.settled(30_000)).toBe(true);
    await spool.close();

    expect(most).toBe(2);
    expect(loaded.length).toBe(60);
    expect(new Set(loaded).size).toBe(60);
    expect(calls).toBeGreaterThan(3);
    // every segment was deleted once loaded, and the directory went with the last
    expect(fs.existsSync(path.join(root, 'lanes'))).toBe(false);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('by default one load at a time, with segments waiting behind it', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spool-lanes-'));
    let inFlight = 0;
    let most = 0;
    let n = 0;
    // The first load is held until every record is appended, so closed segments wait behind it.
    let appended: () => void = () => {};
    const allAppended = new Promise<void>((r) => (appended = r));
    let first = true;
    const spool = new Spool({ ...opts(root, 1), loadConcurrency: undefined }, async (records) => {
      inFlight++;
      most = Math.max(most, inFlight);
      if (first) {
        first = false;
        await allAppended;
      }
      n += records.length;
      inFlight--;
      return { refused: [] };
    });
    spool.start({ warn() {}, error() {} });
    await appendAll(spool, 24);
    appended();
    expect(await spool.settled(30_000)).toBe(true);
    await spool.close();
    expect(n).toBe(24);
    expect(most).toBe(1);
    fs.rmSync(root, { recursive: true, force: true });
  });
});

describe('larger loads under a backlog (backlogLoadBytes)', () => {
  /**
   * Bytes per load (records with their headers), whether the sink was told it is caught up, and
   * the records loaded, the first load held until every record is appended: a backlog behind it.
   */
  async function loadsOf(
    backlogLoadBytes: number | undefined,
  ): Promise<{ bytes: number[]; caughtUp: boolean[]; records: string[] }> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spool-backlog-'));
    const bytes: number[] = [];
    const caughtUp: boolean[] = [];
    const records: string[] = [];
    let appended: () => void = () => {};
    const allAppended = new Promise<void>((r) => (appended = r));
    // Segments close at loadBytes (64) only, no timer: one or two writes of four ~15-byte records.
    const spool = new Spool({ ...opts(root, 1), loadIntervalMs: 60_000, backlogLoadBytes }, async (batch, load) => {
      if (bytes.length === 0) await allAppended;
      bytes.push(batch.reduce((n, r) => n + HEADER_BYTES + payloadOf(r).length, 0));
      caughtUp.push(load.caughtUp);
      for (const r of batch) records.push(payloadOf(r).toString());
      return { refused: [] };
    });
    spool.start({ warn() {}, error() {} });
    await appendAll(spool, 80);
    appended();
    expect(await spool.settled(30_000)).toBe(true);
    await spool.close();
    fs.rmSync(root, { recursive: true, force: true });
    return { bytes, caughtUp, records };
  }

  it('behind by more than it, a load takes up to backlogLoadBytes; caught up, loadBytes again', async () => {
    const larger = await loadsOf(512);
    // Every record once, in order.
    expect(larger.records).toEqual(Array.from({ length: 80 }, (_, i) => `r${i}`));
    // ~1 KB waits behind the first load: the next takes several segments, never past 512 bytes.
    const [, second] = larger.bytes;
    expect(second).toBeGreaterThan(2 * 120);
    expect(Math.max(...larger.bytes)).toBeLessThanOrEqual(512);
    // The last load comes once less than 512 bytes wait: one segment (two writes at most).
    expect(larger.bytes.at(-1)).toBeLessThanOrEqual(120);
    // The sink is told whether its load leaves segments waiting (its inserts then compete with the
    // requests as equals): the second (~1 KB waiting, it takes 512 bytes) does, the last does not.
    expect(larger.caughtUp[1]).toBe(false);
    expect(larger.caughtUp.at(-1)).toBe(true);

    // By default a load is one segment (past loadBytes), backlog or not.
    const one = await loadsOf(undefined);
    expect(one.records).toEqual(larger.records);
    expect(Math.max(...one.bytes)).toBeLessThanOrEqual(120);
    expect(one.bytes.length).toBeGreaterThan(larger.bytes.length);
  });
});
