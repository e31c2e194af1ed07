import { createHash } from 'node:crypto';
import { BoundedMap } from '../lib/boundedMap.ts';
import { MAX_JSON_DEPTH, pruneDeeperThan } from '../lib/jsonDepth.ts';
import { loggableError, silentLog, type Log } from '../lib/log.ts';
import { Spool, type SpoolOptions } from '../stores/spool/spool.ts';
import { payloadOf, type SpooledRecord } from '../stores/spool/records.ts';
import type { BatchOutcome, CrashInput, RecordCrashResult } from './recordCrashes/index.ts';
import { classify, PermanentError } from './errors.ts';
import { StepError, stepRunner, type RunStep, type StepObserver } from './steps.ts';

/** A crash report exactly as `record()` takes it, every field the schema let through included. */
export type CrashReport = CrashInput['crash'];

/** One spooled crash: the project it was accepted for and the parsed report. */
export interface CrashRecord {
  projectId: string;
  crash: CrashReport;
}

const FORMAT = 1;

/**
 * Batches recorded at once. A batch waits on ClickHouse (its occurrences' insert) and then on
 * Postgres (its transaction); with two in flight, one batch's insert and reads run while the
 * other's transaction does. Exactly once does not rest on the order: the ledger and the groups'
 * keys decide each occurrence and each first occurrence in the transaction, as they do for two
 * processes.
 */
const LOADS_IN_FLIGHT = 2;

/**
 * A spool record's payload: one JSON line `{"v":1,"projectId":…,"crash":{…}}`. The report is the
 * parsed body as validated (ids lower-cased, sanitised), kept whole, so fields added to the
 * schema later travel without a format change; `v` moves only if the envelope does.
 */
export function encodeCrashRecord(projectId: string, crash: CrashReport): Buffer {
  return Buffer.from(`{"v":${FORMAT},"projectId":${JSON.stringify(projectId)},"crash":${crashJson(crash)}}\n`);
}

function crashJson(crash: CrashReport): string {
  try {
    return JSON.stringify(crash);
  } catch (err) {
    // A free-form field nested 50k deep parses, but overflows JSON.stringify's stack (a 500 the
    // SDK would retry forever). Only then, cut below MAX_JSON_DEPTH: the field still nests deeper
    // than its own limit, so the record step drops it with the reason the report would have had.
    if (!(err instanceof RangeError)) throw err;
    return JSON.stringify(pruneDeeperThan(crash, MAX_JSON_DEPTH));
  }
}

export function decodeCrashRecord(payload: Buffer): CrashRecord {
  let r: { v?: unknown; projectId?: unknown; crash?: unknown };
  try {
    r = JSON.parse(payload.toString('utf8')) as typeof r;
  } catch {
    throw new PermanentError('undecodable', 'the record is not JSON');
  }
  const shaped =
    r !== null &&
    typeof r === 'object' &&
    r.v === FORMAT &&
    typeof r.projectId === 'string' &&
    r.crash !== null &&
    typeof r.crash === 'object';
  if (!shaped) {
    throw new PermanentError('undecodable', `not a crash record of format ${FORMAT}`);
  }
  return { projectId: r.projectId as string, crash: r.crash as CrashReport };
}

export interface CrashPipelineDeps {
  /** The unit of work: records one crash (grouping, first occurrence, session flags); repeatable. */
  record: (projectId: string, crash: CrashReport, runStep: RunStep) => Promise<RecordCrashResult>;
  /**
   * The batch's unit of work (src/pipeline/recordCrashes/): every report of a batch in one
   * ClickHouse insert and one Postgres transaction, its own steps timed by `runStep`; absent,
   * reports are recorded one by one.
   */
  recordBatch?: (items: CrashRecord[], runStep: RunStep) => Promise<BatchOutcome[]>;
  /** A new group's or a regression's job is in the outbox: wake the worker. */
  onNewCrashGroup?: () => void;
}

export interface CrashPipelineOptions {
  spool: SpoolOptions;
  /** Records of a batch in flight at once (their occurrences share the group commit). */
  concurrency: number;
  /** Batches an unclassified error of one record may fail before that record is set aside. */
  maxUnclassifiedRepeats?: number;
}

/** A record of a batch that is set aside, with the step's error. */
type Refused = { record: SpooledRecord; error: StepError };

/** A record set aside: the step that failed and why. */
export interface SetAside {
  step: string;
  reason: string;
}

/**
 * The crash path behind the spool (docs/decisions.md, "Crashes through the spool"). The request
 * appends a record and is answered once it is fsync'd; the spool's loader hands batches of
 * records to `runBatch`, which takes each record through named steps:
 *
 *   decode → record (record.read → record.group → record.store → record.decide) → notify
 *
 * One error policy (src/pipeline/errors.ts): a retryable error of any record (a store down)
 * fails the batch once the records in flight have settled, and the spool keeps the segments
 * and tries them again with backoff; a permanent one (the session is gone, a program error on
 * that record) sets that record aside with its step and reason, logged and counted, and the
 * batch goes on. Replaying records is safe: `record()` changes nothing the second time.
 */
export class CrashPipeline {
  readonly spool: Spool;
  /** Set by the metrics (a histogram per step). */
  observeStep: StepObserver | undefined;
  /** Set by the metrics (a counter per step and reason). */
  onSetAside: ((s: SetAside) => void) | undefined;
  /** Batches failed by a retryable error since start (each is tried again). */
  batchRetries = 0;
  private log: Log = silentLog;
  private readonly runStep = stepRunner(() => this.observeStep);
  /** How often a record failed its batch with an unclassified error (by payload digest). */
  private readonly unclassified = new BoundedMap<string, number>(10_000);
  private readonly maxRepeats: number;

  constructor(
    private readonly d: CrashPipelineDeps,
    private readonly opts: CrashPipelineOptions,
  ) {
    this.maxRepeats = opts.maxUnclassifiedRepeats ?? 5;
    this.spool = new Spool({ loadConcurrency: LOADS_IN_FLIGHT, ...opts.spool, asideLine }, (records) =>
      this.runBatch(records),
    );
  }

  /** Resolves once the report is durable in the spool (QueueFullError when it is full: 503). */
  append(projectId: string, crash: CrashReport): Promise<void> {
    return this.spool.append([encodeCrashRecord(projectId, crash)], 1);
  }

  start(log: Log): void {
    this.log = log;
    this.spool.start(log);
  }

  /** Resolves once every report appended so far is recorded (tests, a read-your-writes wait). */
  settled(timeoutMs?: number): Promise<boolean> {
    return this.spool.settled(timeoutMs);
  }

  close(): Promise<void> {
    return this.spool.close();
  }

  /**
   * One batch: resolves with the records set aside; rejects (a StepError) when it must be
   * retried. The batch is recorded whole (decode → record → notify, `record` one transaction for
   * all); should that fail with an error no rule puts on the stores, or one about the data, the
   * batch is recorded again one report at a time, so the report at fault is found and set
   * aside alone and the rest is recorded (a replay changes nothing for those already recorded).
   */
  async runBatch(records: readonly SpooledRecord[]): Promise<{ refused: Refused[] }> {
    if (!this.d.recordBatch || records.length === 1) return this.oneByOne(records);
    const refused: Refused[] = [];
    const decoded: { r: SpooledRecord; rec: CrashRecord }[] = [];
    for (const r of records) {
      try {
        decoded.push({ r, rec: await this.runStep('decode', () => decodeCrashRecord(payloadOf(r))) });
      } catch (err) {
        refused.push({ record: r, error: this.verdictOf(r, err) });
      }
    }
    let outcomes: BatchOutcome[];
    try {
      outcomes = await this.runStep('record', () => this.recordAll(decoded.map((x) => x.rec)));
    } catch (err) {
      const e = err instanceof StepError ? err : new StepError('record', classify(err), err);
      if (e.verdict.kind === 'retryable' && e.verdict.reason !== 'unclassified') {
        this.batchRetries++;
        throw e;
      }
      return this.oneByOne(records);
    }
    let fresh = false;
    outcomes.forEach((o, i) => {
      const x = decoded[i];
      if (!x) return;
      if (o.outcome === 'recorded') fresh ||= o.newGroup || o.regressed === true;
      else {
        // Checked at the request; deleted since (retention, a project removed): never recordable.
        const cause =
          o.outcome === 'no-session' ? new PermanentError('session-gone', 'the session no longer exists') : o.error;
        refused.push({ record: x.r, error: new StepError('record', classify(cause), cause) });
      }
    });
    await this.runStep('notify', () => {
      if (fresh) this.d.onNewCrashGroup?.();
    });
    for (const { error } of refused) this.setAsideOne(error);
    return { refused };
  }

  private recordAll(recs: CrashRecord[]): Promise<BatchOutcome[]> {
    const batch = this.d.recordBatch;
    return batch ? batch(recs, this.runStep) : Promise.resolve([]);
  }

  /** The batch one report at a time (several in flight), each failure its own report's. */
  private async oneByOne(records: readonly SpooledRecord[]): Promise<{ refused: Refused[] }> {
    const refused: Refused[] = [];
    let retry: StepError | undefined;
    const queue = records.values();
    const lane = async () => {
      // A retryable failure stops new records from starting; those in flight finish first.
      while (retry === undefined) {
        const taken = queue.next();
        if (taken.done) return;
        const r = taken.value;
        try {
          await this.one(r);
        } catch (err) {
          const e = this.verdictOf(r, err);
          if (e.verdict.kind === 'retryable') retry ??= e;
          else refused.push({ record: r, error: e });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, records.length) }, lane));
    for (const { error } of refused) this.setAsideOne(error);
    if (retry) {
      this.batchRetries++;
      throw retry;
    }
    return { refused };
  }

  private async one(r: SpooledRecord): Promise<void> {
    const rec = await this.runStep('decode', () => decodeCrashRecord(payloadOf(r)));
    const out = await this.runStep('record', async () => {
      const res = await this.d.record(rec.projectId, rec.crash, this.runStep);
      // Checked at the request; deleted since (retention, a project removed): never recordable.
      if (res.outcome === 'no-session') throw new PermanentError('session-gone', 'the session no longer exists');
      return res;
    });
    await this.runStep('notify', () => {
      if (out.newGroup || out.regressed) this.d.onNewCrashGroup?.();
    });
  }

  /**
   * The policy's verdict, bounded for errors it cannot name: one record failing its batch that
   * way `maxUnclassifiedRepeats` times is taken for the record's fault, not the store's.
   */
  private verdictOf(r: SpooledRecord, err: unknown): StepError {
    const e = err instanceof StepError ? err : new StepError('batch', classify(err), err);
    if (e.verdict.kind !== 'retryable' || e.verdict.reason !== 'unclassified') return e;
    const key = createHash('sha1').update(payloadOf(r)).digest('hex');
    const n = (this.unclassified.get(key) ?? 0) + 1;
    this.unclassified.set(key, n);
    if (n < this.maxRepeats) return e;
    this.unclassified.delete(key);
    return new StepError(e.step, { kind: 'permanent', reason: 'unclassified-repeated' }, e.cause);
  }

  private setAsideOne(e: StepError): void {
    this.onSetAside?.({ step: e.step, reason: e.verdict.reason });
    const why = { step: e.step, reason: e.verdict.reason, err: loggableError(e.cause) };
    this.log.error(why, 'crash pipeline: a report that can never be recorded is set aside');
  }
}

/** A line of the refused file: when, which step and why, and the record as spooled (to replay by hand). */
function asideLine(record: SpooledRecord, error: unknown): Buffer {
  const text = payloadOf(record).toString('utf8').trimEnd();
  let body: string;
  try {
    JSON.parse(text);
    body = text;
  } catch {
    body = JSON.stringify(text);
  }
  const e = error instanceof StepError ? error : undefined;
  const cause = e ? e.cause : error;
  const head = {
    at: new Date().toISOString(),
    step: e?.step ?? null,
    reason: e?.verdict.reason ?? null,
    error: cause instanceof Error ? cause.message : String(cause),
  };
  return Buffer.from(`${JSON.stringify(head).slice(0, -1)},"record":${body}}\n`);
}
