import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Spool, segmentName, type SpoolSink } from '../../src/stores/spool/spool.ts';
import { payloadOf, recordHeader, type SpooledRecord } from '../../src/stores/spool/records.ts';
import { sleep } from '../helpers/wait.ts';

// A segment held in memory is a copy in one of a few arenas the spool reuses
// (src/stores/spool/arenas.ts); the records a load hands over are views of it. On real segment files.
// Odd, while every record below is of even size (a 12-byte header and an even body): a segment
// read back from its file is never LOAD_BYTES long, so a view of that length is an arena's.
const LOAD_BYTES = 2047;
const opts = (root: string) => ({
  root,
  instance: 'arenas',
  maxBytes: 64 * 1024 * 1024,
  loadBytes: LOAD_BYTES,
  loadIntervalMs: 20,
  staleMs: 30_000,
});

/** A record's text, distinct per record and of varied even length (30-330 bytes). */
const body = (i: number) => {
  const text = `{"n":${i},"pad":"${'x'.repeat((i * 37) % 300)}"}`;
  return text.length % 2 ? `${text} ` : text;
};

describe('spool arenas', () => {
  afterEach(() => vi.useRealTimers());

  it('loads every record once with its own bytes while arenas are reused, a load in flight keeping its arena', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spool-arenas-'));
    const loaded: string[] = [];
    const arenas = new Set<ArrayBufferLike>();
    let readBack = 0;
    let loads = 0;
    const sink: SpoolSink = async (records) => {
      const fromArena = (r: SpooledRecord) => r.chunks[0]?.buffer.byteLength === LOAD_BYTES;
      for (const r of records) {
        if (fromArena(r)) arenas.add((r.chunks[0] as Buffer).buffer);
        else readBack++;
      }
      // Held while later segments are written: a load's views must still hold its own bytes after.
      if (loads++ % 3 === 0) await sleep(30);
      for (const r of records) loaded.push(payloadOf(r).toString());
      return { refused: [] };
    };
    const spool = new Spool(opts(root), sink);
    spool.start({ warn() {}, error() {} });
    const n = 600;
    for (let i = 0; i < n; i += 10)
      await Promise.all(Array.from({ length: 10 }, (_, k) => spool.append([Buffer.from(body(i + k))], 1)));
    expect(await spool.settled(30_000)).toBe(true);
    await spool.close();

    expect(loaded.length).toBe(n);
    expect(new Set(loaded).size).toBe(n);
    for (const text of loaded) expect(text).toBe(body(JSON.parse(text).n));
    expect(loaded.every((text) => text.length % 2 === 0)).toBe(true);
    // ~115 KB in segments of 2 KB went through memory in three arenas at most (the one being
    // written and two waiting or loading); a segment written while all three were taken was read
    // back from its file instead.
    expect(loads).toBeGreaterThan(20);
    expect(arenas.size).toBeGreaterThan(0);
    expect(arenas.size).toBeLessThanOrEqual(3);
    expect(readBack).toBeLessThan(n);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('a record larger than an arena is written and loaded from its segment file', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spool-arenas-'));
    const loaded: string[] = [];
    const spool = new Spool(opts(root), async (records) => {
      for (const r of records) loaded.push(payloadOf(r).toString());
      return { refused: [] };
    });
    spool.start({ warn() {}, error() {} });
    const big = `{"big":"${'y'.repeat(3 * LOAD_BYTES)}"}`;
    await spool.append([Buffer.from('{"small":1}')], 1);
    await spool.append([Buffer.from(big.slice(0, 10)), Buffer.from(big.slice(10))], 1);
    await spool.append([Buffer.from('{"small":2}')], 1);
    expect(await spool.settled(30_000)).toBe(true);
    await spool.close();
    expect(loaded).toEqual(['{"small":1}', big, '{"small":2}']);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('a segment that could not be created holds no arena: later segments are still kept in memory', async () => {
    // Segment names are "<seq>-<Date.now()>.seg": with the clock held, the next names are known,
    // and a file already there makes creating that segment fail (O_EXCL).
    const now = Date.UTC(2026, 10, 28, 12);
    vi.useFakeTimers({ toFake: ['Date'], now });
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spool-arenas-'));
    const fromArena: boolean[] = [];
    const loaded: string[] = [];
    const spool = new Spool(opts(root), async (records) => {
      for (const r of records) {
        fromArena.push(r.chunks[0]?.buffer.byteLength === LOAD_BYTES);
        loaded.push(payloadOf(r).toString());
      }
      return { refused: [] };
    });
    spool.start({ warn() {}, error() {} });
    // The next four segments' names, taken: more failures than the spool has arenas (three).
    const taken = [1, 2, 3, 4].map((seq) => path.join(spool.dir, segmentName(seq, now)));
    for (const file of taken) fs.writeFileSync(file, '');
    for (let i = 0; i < taken.length; i++)
      await expect(spool.append([Buffer.from(body(i))], 1)).rejects.toMatchObject({ code: 'EEXIST' });
    for (const file of taken) fs.rmSync(file);

    for (let i = 10; i < 16; i++) await spool.append([Buffer.from(body(i))], 1);
    expect(await spool.settled(30_000)).toBe(true);
    await spool.close();
    expect(loaded).toEqual(Array.from({ length: 6 }, (_, k) => body(10 + k)));
    expect(fromArena.every(Boolean)).toBe(true);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('segments read back from disk share one reused buffer; one a failed load viewed is left to the store', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spool-arenas-'));
    // Six segments of a run that stopped, ten records each, one segment per load.
    const dir = path.join(root, 'arenas');
    fs.mkdirSync(dir);
    const texts = (seg: number) => Array.from({ length: 10 }, (_, k) => body(seg * 10 + k));
    for (let seg = 0; seg < 6; seg++) {
      const records = texts(seg).map((t) => Buffer.concat([recordHeader([Buffer.from(t)], 1), Buffer.from(t)]));
      fs.writeFileSync(path.join(dir, segmentName(seg + 1, Date.now())), Buffer.concat(records));
    }
    const viewed: ArrayBufferLike[] = [];
    const loaded: string[] = [];
    let failed: SpooledRecord[] = [];
    const spool = new Spool(opts(root), async (records) => {
      expect(new Set(records.map((r) => r.chunks[0]?.buffer)).size).toBe(1);
      viewed.push((records[0] as SpooledRecord).chunks[0]?.buffer as ArrayBufferLike);
      if (viewed.length === 3) {
        failed = records;
        throw new Error('the store went away mid-insert');
      }
      for (const r of records) loaded.push(payloadOf(r).toString());
      return { refused: [] };
    });
    spool.start({ warn() {}, error() {} });
    expect(await spool.settled(30_000)).toBe(true);
    await spool.close();

    const all = Array.from({ length: 6 }, (_, seg) => texts(seg)).flat();
    expect(loaded).toEqual(all);
    expect(viewed).toHaveLength(7);
    // Loads before the failure read into one buffer; the failed one's was not reused, so the bytes
    // the store may still have been sending are intact; the loads after share another.
    expect(viewed[1]).toBe(viewed[0]);
    expect(viewed[2]).toBe(viewed[0]);
    expect(viewed[3]).not.toBe(viewed[0]);
    for (const b of viewed.slice(4)) expect(b).toBe(viewed[3]);
    expect(failed.map((r) => payloadOf(r).toString())).toEqual(texts(2));
    fs.rmSync(root, { recursive: true, force: true });
  });
});
