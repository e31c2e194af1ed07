import fs from 'node:fs';
import path from 'node:path';
import { QueueFullError } from '../../domain/errors.ts';
import { Arenas } from './arenas.ts';
import { DirLocks, LOCK_FILE } from './dirLock.ts';
import {
  HEADER_BYTES,
  payloadOf,
  readRecords,
  recordHeader,
  writeRecordInto,
  type CorruptSpan,
  type SpooledRecord,
} from './records.ts';

export interface SpoolOptions {
  /** The volume's spool root; this process's directory is `<root>/<instance>`. */
  root: string;
  /** A stable name (a StatefulSet pod's) or, by default, host and pid. */
  instance: string;
  /** Bytes on disk not yet loaded (all held directories) past which appends are refused (503). */
  maxBytes: number;
  /** A segment is closed, and loaded, once it holds this many bytes… */
  loadBytes: number;
  /** …or once its first record is this old. */
  loadIntervalMs: number;
  /**
   * A load's bytes when more than this is waiting (default `loadBytes`: no larger loads). An
   * insert costs the engine a fixed part whatever its size, so under a backlog fewer, larger
   * loads store more rows per core; without one, loads stay small for the half-load tail.
   */
  backlogLoadBytes?: number;
  /** A lock whose heartbeat is older than this is free to take over (another host's process). */
  staleMs: number;
  heartbeatMs?: number;
  /**
   * Loads in flight at once (default 1): a sink whose steps wait on different stores (the crash
   * path: ClickHouse, then a Postgres transaction) runs one load's first steps beside another's last.
   */
  loadConcurrency?: number;
  /** How a record set aside is written to the refused file (default: its payload as it is). */
  asideLine?: (record: SpooledRecord, error: unknown) => Buffer;
}

/**
 * What the loader knows of a load: `caughtUp`, it takes every closed segment (none is left
 * waiting behind it). Only then may its insert go in the background (InsertOptions): with segments
 * waiting, the loader competes with the requests as an equal, so a load near the service's
 * capacity does not leave the loader further and further behind.
 */
export interface SpoolLoad {
  caughtUp: boolean;
}

/**
 * Moves records into the store. Resolves with the records the store refused for good (they are
 * set aside, not retried); rejects when the store is down: the same records are tried again.
 */
export type SpoolSink = (
  records: SpooledRecord[],
  load: SpoolLoad,
) => Promise<{ refused: { record: SpooledRecord; error: unknown }[] }>;

export interface SpoolLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

interface Segment {
  dir: string;
  file: string;
  seq: number;
  /** When its first record was appended (from its name), for the age of the oldest body. */
  createdMs: number;
  bytes: number;
  /**
   * The segment's bytes as written, copied into an arena while one is free: loaded from here,
   * the segment is not read back from disk nor its CRCs checked again. Undefined for segments of
   * an earlier run or another process, when every arena was in use, or once a write did not fit.
   */
  memory?: { arena: Buffer; used: number; records: SpooledRecord[] };
}

interface Waiting {
  chunks: readonly Buffer[];
  rows: number;
  bytes: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

const SEGMENT = /^(\d{12})-(\d+)\.seg$/;
/** A segment's file name: its sequence number (the load order) and when it was created. */
export const segmentName = (seq: number, createdMs: number) => `${String(seq).padStart(12, '0')}-${createdMs}.seg`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * A segment is opened for synchronised writes (O_DSYNC): each write returns once its bytes are
 * on disk, as a write followed by fdatasync would, in one call to the thread pool instead of two,
 * so an append waits on the request thread once less.
 */
const SEGMENT_FLAGS =
  fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_TRUNC | fs.constants.O_DSYNC;
/** Failed loads in a row after which a stopping spool leaves the rest on disk. */
const STOPPING_TRIES = 2;
/** Segments kept in memory at once: the one being written, and the loads in flight or next. */
const ARENAS = 3;

/**
 * The durable spool between acknowledgement and ClickHouse (docs/decisions.md, Ingestion spool).
 *
 * Appends: an accepted body is one record in this process's current segment; concurrent
 * appends share one synchronised write (group commit; see SEGMENT_FLAGS), made from the
 * segment's arena (`piecesOf`), and each resolves once that write returned, which is when the API
 * answers 201. One write is in flight at a time; what arrives meanwhile goes into the next.
 *
 * Loading: a segment is closed at `loadBytes` or `loadIntervalMs` after its first record, and
 * the loader hands closed segments (several at once, up to `loadBytes`) to the sink in one
 * insert; a segment file is deleted only after the sink resolved (the insert committed). A
 * store that is down keeps the segments, retried with backoff; meanwhile appends go on until
 * `maxBytes` is spooled, then QueueFullError (503 + Retry-After).
 *
 * Recovery: segments left by a process that died (this directory when the instance name is
 * stable, or any directory of the root whose lock is stale) are taken over and loaded like new
 * ones. A record torn by the crash fails its CRC and ends its segment; it was never
 * acknowledged. Replaying a segment whose insert committed just before the crash writes rows
 * the tables' ReplacingMergeTree keys collapse, so a replay is idempotent.
 */
export class Spool {
  readonly dir: string;
  private readonly locks: DirLocks;
  private readonly opts: Required<Omit<SpoolOptions, 'asideLine'>> & Pick<SpoolOptions, 'asideLine'>;
  private seq = 0;
  /** The segment appends go to, and its open file. */
  private active: { seg: Segment; fd: number } | undefined;
  private closed: Segment[] = [];
  /** The segments of each load in flight. */
  private inFlight = new Set<Segment[]>();
  private waiting: Waiting[] = [];
  private waitingBytes = 0;
  private writing: Promise<void> | undefined;
  private arenas: Arenas;
  /** One buffer per load lane for the segments a load reads back from disk (`readInto`). */
  private readBacks: Arenas;
  private rollTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private wakers: (() => void)[] = [];
  /** Loads failed in a row, and when the next may be tried (shared by every lane). */
  private failures = 0;
  private retryAt = 0;
  private loader: Promise<void> | undefined;
  private stopping = false;
  private adopted = new Set<string>();
  private scanning = false;
  /** Bytes of every held segment not yet loaded, plus appends not yet written. */
  bytes = 0;
  /** Seconds between the oldest body of the last committed load and its commit. */
  loaderLagSeconds = 0;
  loadedRows = 0;
  refusedRecords = 0;
  tornBytes = 0;
  /** Spans of acknowledged records that failed their CRC (a bad byte on disk): set aside, lost to the tables. */
  corruptRecords = 0;
  corruptBytes = 0;

  private log: SpoolLog = { warn() {}, error() {} };

  constructor(
    opts: SpoolOptions,
    private readonly sink: SpoolSink,
  ) {
    this.opts = {
      heartbeatMs: Math.max(100, Math.min(2000, Math.floor(opts.staleMs / 4))),
      ...opts,
      loadConcurrency: Math.max(1, opts.loadConcurrency ?? 1),
      backlogLoadBytes: Math.max(opts.loadBytes, opts.backlogLoadBytes ?? opts.loadBytes),
    };
    this.locks = new DirLocks(opts.staleMs);
    this.arenas = new Arenas(opts.loadBytes, ARENAS + this.opts.loadConcurrency - 1);
    // A load's segments take at most backlogLoadBytes together, but one alone may pass it by what
    // its last write added (a segment closes once it holds loadBytes): room for both.
    this.readBacks = new Arenas(this.opts.backlogLoadBytes + opts.loadBytes, this.opts.loadConcurrency);
    fs.mkdirSync(opts.root, { recursive: true });
    this.dir = path.join(opts.root, opts.instance);
    if (fs.existsSync(this.dir)) {
      if (!this.locks.tryTake(this.dir))
        throw new Error(
          `spool directory ${this.dir} is held by a running process (its ${LOCK_FILE}); give each process its own SPOOL_INSTANCE`,
        );
    } else {
      this.locks.createLocked(this.dir);
    }
    // What this directory holds from a previous run is loaded first; new segments follow it.
    for (const s of this.segmentsOf(this.dir)) {
      this.seq = Math.max(this.seq, s.seq);
      this.closed.push(s);
      this.bytes += s.bytes;
    }
    this.startHeartbeat();
  }

  private segmentsOf(dir: string): Segment[] {
    const out: Segment[] = [];
    for (const name of fs.readdirSync(dir)) {
      const m = SEGMENT.exec(name);
      if (!m) continue;
      const file = path.join(dir, name);
      out.push({ dir, file, seq: Number(m[1]), createdMs: Number(m[2]), bytes: fs.statSync(file).size });
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** Takes over the directories of processes that died on this volume; their segments are loaded. */
  private adoptOrphans(): void {
    for (const name of fs.readdirSync(this.opts.root)) {
      const dir = path.join(this.opts.root, name);
      if (name.startsWith('.') || dir === this.dir || this.adopted.has(dir) || !fs.statSync(dir).isDirectory())
        continue;
      if (!this.locks.tryTake(dir)) continue;
      const segments = this.segmentsOf(dir);
      this.adopted.add(dir);
      for (const s of segments) {
        this.closed.push(s);
        this.bytes += s.bytes;
      }
      if (segments.length)
        this.log.warn(
          { dir, segments: segments.length, bytes: segments.reduce((n, s) => n + s.bytes, 0) },
          'spool: taking over the segments of a process that stopped',
        );
      this.wakeLoaders();
    }
  }

  /** Takes over orphaned directories, starts the loader and the lock heartbeat. */
  start(log: SpoolLog): void {
    this.log = log;
    this.adoptOrphans();
    this.scanning = true;
    this.loader = this.loadLoop();
  }

  /** From construction on: a process that is still starting keeps its directory. */
  private startHeartbeat(): void {
    this.heartbeat = setInterval(() => {
      for (const dir of this.locks.beat()) {
        this.log.error(
          { dir },
          'spool: another process took over a directory this one held (SPOOL_LOCK_STALE_MS shorter than a pause of this process?)',
        );
        // Its segments are that process's now: this one takes no more bodies (503).
        if (dir === this.dir) this.stopping = true;
      }
      if (!this.scanning) return;
      // A process on this volume that died meanwhile (a worker, a replica) is taken over here.
      try {
        this.adoptOrphans();
      } catch (err) {
        this.log.warn({ err: String(err) }, 'spool: scanning for orphaned directories failed');
      }
    }, this.opts.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Resolves once the record is on disk (the group's O_DSYNC write); QueueFullError past `maxBytes`. */
  append(chunks: readonly Buffer[], rows: number): Promise<void> {
    if (this.stopping) return Promise.reject(new QueueFullError());
    let bytes = HEADER_BYTES;
    for (const c of chunks) bytes += c.length;
    if (this.bytes > 0 && this.bytes + bytes > this.opts.maxBytes) return Promise.reject(new QueueFullError());
    this.bytes += bytes;
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ chunks, rows, bytes, resolve, reject });
      this.waitingBytes += bytes;
      this.writing ??= this.writeLoop();
    });
  }

  private async writeLoop(): Promise<void> {
    // The appends of this tick and those that arrive during a write share the next one.
    await new Promise((r) => setImmediate(r));
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      const size = this.waitingBytes;
      this.waiting = [];
      this.waitingBytes = 0;
      try {
        // A segment held in memory ends where its arena does: a batch that does not fit starts the next.
        const current = this.active?.seg;
        if (current?.memory && current.bytes > 0 && current.memory.used + size > current.memory.arena.length)
          this.roll();
        const { seg, fd } = this.active ?? (await this.openSegment());
        const { pieces, kept } = this.piecesOf(seg, batch, size);
        // A new file's name must be durable too (a power loss, not only a crash): once per segment,
        // beside the write (the name exists once the file is open), not one disk round trip after it.
        // Both are settled before a failure is handled: the handler closes the file, which must not
        // happen under a write still in flight (its descriptor could be reused meanwhile).
        const [wrote, synced] = await Promise.allSettled([
          writeAll(fd, pieces),
          seg.bytes === 0 ? syncDir(this.dir) : undefined,
        ]);
        if (wrote.status === 'rejected') throw wrote.reason;
        if (synced.status === 'rejected') throw synced.reason;
        seg.bytes += size;
        if (kept && seg.memory) {
          seg.memory.records.push(...kept);
          seg.memory.used += size;
        }
        for (const w of batch) w.resolve();
        if (seg.bytes >= this.opts.loadBytes) this.roll();
      } catch (err) {
        this.bytes -= size;
        for (const w of batch) w.reject(err);
        // Whatever part of the batch reached the file is not acknowledged; nothing may follow it.
        this.log.error({ err: String(err) }, 'spool: write failed');
        this.roll();
      }
    }
    this.writing = undefined;
  }

  /**
   * What a write sends: the batch's records copied into the segment's arena, one piece, and the
   * records as views of it (kept once the write succeeds); or, for a segment not in memory (or a
   * batch larger than its arena, which then leaves memory), header and body pieces as appended.
   */
  private piecesOf(seg: Segment, batch: Waiting[], size: number): { pieces: Buffer[]; kept?: SpooledRecord[] } {
    const mem = seg.memory;
    if (mem && mem.used + size <= mem.arena.length) {
      const kept: SpooledRecord[] = [];
      let off = mem.used;
      for (const w of batch) {
        const end = writeRecordInto(mem.arena, off, w.chunks, w.rows);
        kept.push({ chunks: [mem.arena.subarray(off + HEADER_BYTES, end)], rows: w.rows });
        off = end;
      }
      return { pieces: [mem.arena.subarray(mem.used, off)], kept };
    }
    this.dropFromMemory(seg);
    const pieces: Buffer[] = [];
    for (const w of batch) pieces.push(recordHeader(w.chunks, w.rows), ...w.chunks);
    return { pieces };
  }

  /** Only once nothing reads the segment's in-memory records any more: its arena is reused. */
  private dropFromMemory(seg: Segment): void {
    if (!seg.memory) return;
    this.arenas.give(seg.memory.arena);
    seg.memory = undefined;
  }

  /**
   * Creates the next segment in the thread pool: creating a file allocates its inode, which took
   * the request thread 0.7 ms at the median and up to 6 ms on the bench machine's ext4, ten
   * times a second at half load (docs/bench.md, "Session of 2026-11-28 (fifth)"). Only the write
   * loop calls this, so nothing else opens a segment meanwhile; `roll` finds none to close.
   */
  private async openSegment(): Promise<{ seg: Segment; fd: number }> {
    const createdMs = Date.now();
    const seg: Segment = {
      dir: this.dir,
      file: path.join(this.dir, segmentName(++this.seq, createdMs)),
      seq: this.seq,
      createdMs,
      bytes: 0,
    };
    const fd = await new Promise<number>((resolve, reject) =>
      fs.open(seg.file, SEGMENT_FLAGS, (err, fd) => (err ? reject(err) : resolve(fd))),
    );
    // Taken once the file exists: a segment that could not be created holds no arena.
    const arena = this.arenas.take();
    if (arena) seg.memory = { arena, used: 0, records: [] };
    this.active = { seg, fd };
    this.rollTimer = setTimeout(() => this.rollWhenIdle(), this.opts.loadIntervalMs);
    this.rollTimer.unref();
    return this.active;
  }

  private rollWhenIdle(): void {
    if (this.writing) void this.writing.then(() => this.rollWhenIdle());
    else this.roll();
  }

  /** Closes the current segment: the loader may take it. */
  private roll(): void {
    if (!this.active) return;
    const { seg, fd } = this.active;
    clearTimeout(this.rollTimer);
    fs.closeSync(fd);
    this.active = undefined;
    if (seg.bytes === 0) {
      fs.rmSync(seg.file, { force: true });
      this.dropFromMemory(seg);
      return;
    }
    this.closed.push(seg);
    this.wakeLoaders();
  }

  private get loading(): Segment[] {
    return [...this.inFlight].flat();
  }

  private wakeLoaders(): void {
    const w = this.wakers;
    this.wakers = [];
    for (const f of w) f();
  }

  private async loadLoop(): Promise<void> {
    await Promise.all(Array.from({ length: this.opts.loadConcurrency }, () => this.loadLane()));
  }

  private async loadLane(): Promise<void> {
    while (true) {
      if (this.closed.length === 0) {
        if (this.stopping) return;
        await new Promise<void>((r) => this.wakers.push(r));
        continue;
      }
      // After a failure no lane loads until the shared backoff has passed.
      const wait = this.retryAt - Date.now();
      if (wait > 0) {
        if (this.stopping && this.failures > STOPPING_TRIES) return;
        await sleep(wait);
        continue;
      }
      let waiting = 0;
      for (const s of this.closed) waiting += s.bytes;
      const cap = waiting > this.opts.backlogLoadBytes ? this.opts.backlogLoadBytes : this.opts.loadBytes;
      const take: Segment[] = [];
      let size = 0;
      for (
        let s = this.closed[0];
        s !== undefined && (take.length === 0 || size + s.bytes <= cap);
        s = this.closed[0]
      ) {
        this.closed.shift();
        take.push(s);
        size += s.bytes;
      }
      this.inFlight.add(take);
      try {
        await this.load(take, { caughtUp: this.closed.length === 0 });
        this.failures = 0;
        this.retryAt = 0;
      } catch (err) {
        this.closed.unshift(...take);
        this.failures++;
        const failures = this.failures;
        this.retryAt = Date.now() + Math.min(5000, 250 * 2 ** Math.min(failures - 1, 5));
        if (this.stopping && failures > STOPPING_TRIES) return;
        if (failures === 1 || failures % 20 === 0)
          this.log.warn({ err: String(err), failures }, 'spool: loading failed; the segments are kept and tried again');
      } finally {
        this.inFlight.delete(take);
      }
    }
  }

  private async load(segments: Segment[], load: SpoolLoad): Promise<void> {
    const readBack = segments.some((s) => !s.memory) ? this.readBacks.take() : undefined;
    let readBackFree = true;
    try {
      const records: SpooledRecord[] = [];
      let used = 0;
      for (const s of segments) {
        if (s.memory) {
          records.push(...s.memory.records);
          continue;
        }
        const bytes = readBack ? await readInto(s.file, readBack, used) : undefined;
        if (bytes) used += bytes.length;
        const read = readRecords(bytes ?? (await fs.promises.readFile(s.file)));
        if (read.tornBytes > 0) {
          this.tornBytes += read.tornBytes;
          this.log.warn(
            { file: s.file, tornBytes: read.tornBytes, records: read.records.length },
            'spool: a segment ends in a torn record (a write cut by a crash, never acknowledged); its tail is dropped',
          );
        }
        for (const span of read.corrupt) this.setAsideCorrupt(s.file, span);
        records.push(...read.records);
      }
      // A store that failed may still be sending the records' bytes (an insert it gave up
      // waiting on): until the sink resolves, the buffer they view is not reused.
      readBackFree = false;
      const { refused } = records.length ? await this.sink(records, load) : { refused: [] };
      if (refused.length) this.setAside(refused);
      readBackFree = true;
      const oldest = Math.min(...segments.map((s) => s.createdMs));
      this.loaderLagSeconds = (Date.now() - oldest) / 1000;
      for (const r of records) this.loadedRows += r.rows;
    } finally {
      if (readBack && readBackFree) this.readBacks.give(readBack);
      else if (readBack) this.readBacks.forget();
    }
    // In the thread pool, side by side: an unlink frees the file's blocks (and, mounted with
    // `discard`, trims them), 2.7 ms for 8 MB on the bench machine's idle disk, which the request
    // thread would wait.
    await Promise.all(
      segments.map(async (s) => {
        await fs.promises.rm(s.file, { force: true });
        this.bytes -= s.bytes;
        this.dropFromMemory(s);
      }),
    );
    this.inFlight.delete(segments);
    this.releaseEmptyAdopted();
  }

  /**
   * Records the store refuses even as this process serialises them (a fault of this service:
   * they passed validation): kept beside the spool for an operator, out of the loader's way.
   */
  private setAside(refused: { record: SpooledRecord; error: unknown }[]): void {
    this.refusedRecords += refused.length;
    const file = path.join(this.opts.root, `refused-${this.opts.instance}.ndjson`);
    const line = this.opts.asideLine ?? ((r: SpooledRecord) => payloadOf(r));
    // Durable before the segment that held them is deleted.
    const fd = fs.openSync(file, 'a', 0o600);
    try {
      fs.writeSync(fd, Buffer.concat(refused.map((r) => line(r.record, r.error))));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    this.log.error(
      { file, records: refused.length, error: String(refused[0]?.error) },
      'spool: acknowledged records were refused for good; they are kept in this file',
    );
  }

  /**
   * A span of a segment that failed its CRC between valid records: acknowledged data that cannot
   * be read back. Kept whole beside the spool for an operator, counted, and logged as lost;
   * reading went on at the next valid record.
   */
  private setAsideCorrupt(segment: string, span: CorruptSpan): void {
    this.corruptRecords++;
    this.corruptBytes += span.bytes.length;
    const file = path.join(
      this.opts.root,
      `corrupt-${this.opts.instance}-${path.basename(segment, '.seg')}-${span.offset}.bin`,
    );
    fs.writeFileSync(file, span.bytes);
    this.log.error(
      { segment, offset: span.offset, bytes: span.bytes.length, file },
      'spool: acknowledged data lost: a record failed its checksum (a bad byte on disk); it is set aside in this file and reading resumed at the next valid record',
    );
  }

  private releaseEmptyAdopted(): void {
    for (const dir of this.adopted) {
      if (this.closed.some((s) => s.dir === dir) || this.loading.some((s) => s.dir === dir)) continue;
      if (this.segmentsOf(dir).length > 0) continue;
      this.locks.release(dir);
      fs.rmSync(dir, { recursive: true, force: true });
      this.adopted.delete(dir);
    }
  }

  /** Whether bodies are still taken with ClickHouse away: below 90% of `maxBytes`. */
  hasRoom(): boolean {
    return !this.stopping && this.bytes < 0.9 * this.opts.maxBytes;
  }

  /** Age in seconds of the oldest body not yet loaded (0 when none). */
  oldestUnloadedSeconds(): number {
    const all = [
      ...this.loading,
      ...this.closed,
      ...(this.active && this.active.seg.bytes > 0 ? [this.active.seg] : []),
    ];
    if (all.length === 0) return 0;
    return Math.max(0, (Date.now() - Math.min(...all.map((s) => s.createdMs))) / 1000);
  }

  /** Resolves once every body appended so far is loaded (tests, a read-your-writes wait). */
  async settled(timeoutMs = 30_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.writing) await this.writing;
      if (this.active && this.active.seg.bytes > 0) this.roll();
      if (this.closed.length === 0 && this.loading.length === 0 && !this.active && this.waiting.length === 0)
        return true;
      this.wakeLoaders();
      await sleep(20);
    }
    return false;
  }

  /**
   * Shutdown: no more appends; what is spooled is loaded while the store answers, within
   * `timeoutMs`; what is left stays on disk for the next process on this volume.
   */
  async close(timeoutMs = 15_000): Promise<void> {
    this.stopping = true;
    if (this.writing) await this.writing;
    this.roll();
    this.wakeLoaders();
    const left = await Promise.race([this.loader?.then(() => true), sleep(timeoutMs).then(() => false)]);
    clearInterval(this.heartbeat);
    if (!left || this.closed.length > 0 || this.loading.length > 0)
      this.log.warn(
        { dir: this.dir, bytes: this.bytes },
        'spool: stopping with bodies not loaded; the next process on this volume loads them',
      );
    for (const dir of this.adopted) this.locks.release(dir);
    if (this.segmentsOf(this.dir).length === 0) {
      this.locks.release(this.dir);
      fs.rmSync(this.dir, { recursive: true, force: true });
    } else {
      this.locks.release(this.dir);
    }
  }
}

/**
 * A segment file's bytes read into `target` from `offset`, or undefined when they do not fit in
 * what is left of it. Segments read back under a backlog came to ~50 MB a second: each in a fresh
 * buffer (readFile), they lived through their load's insert, were promoted, and drove full
 * collections as external memory, as the bodies did before the arenas (arenas.ts).
 */
async function readInto(file: string, target: Buffer, offset: number): Promise<Buffer | undefined> {
  const fh = await fs.promises.open(file, 'r');
  try {
    let end = offset;
    while (end < target.length) {
      const { bytesRead } = await fh.read(target, end, target.length - end, end - offset);
      if (bytesRead === 0) return target.subarray(offset, end);
      end += bytesRead;
    }
    // Full: the file may go on past it.
    return undefined;
  } finally {
    await fh.close();
  }
}

async function syncDir(dir: string): Promise<void> {
  const fd = await fs.promises.open(dir, 'r');
  try {
    await fd.sync();
  } finally {
    await fd.close();
  }
}

/** writev until every byte is written (a short write continues where it stopped). */
async function writeAll(fd: number, pieces: Buffer[]): Promise<void> {
  let rest = pieces;
  while (rest.length > 0) {
    const n = await new Promise<number>((res, rej) =>
      fs.writev(fd, rest.slice(0, 1024), (e, w) => (e ? rej(e) : res(w))),
    );
    let left = n;
    let i = 0;
    for (let piece = rest[0]; piece !== undefined && left >= piece.length; piece = rest[++i]) left -= piece.length;
    rest = rest.slice(i);
    // A short write stopped inside the piece now first: its written bytes are dropped.
    const partial = rest[0];
    if (left > 0 && partial) rest[0] = partial.subarray(left);
  }
}
