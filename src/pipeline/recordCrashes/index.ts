import type { RunStep } from '../steps.ts';
import type { BatchOutcome, CrashInput, CrashRecorderDeps, RecordCrashResult } from './types.ts';
import { decideBatch } from './decide.ts';
import { placeReports } from './group.ts';
import { readReports } from './read.ts';
import { storeOccurrences } from './store.ts';

export type { BatchOutcome, CrashInput, CrashRecorderDeps, RecordCrashResult } from './types.ts';

/** Steps run as they are, untimed (the synchronous path, where the request times the whole). */
const unobserved: RunStep = async (_name, fn) => fn();

/**
 * Recording crash reports (docs/decisions.md, "Crash batches"), a batch at a time, in four named
 * steps, each timed and classified by the caller's `runStep` (src/pipeline/steps.ts):
 *
 *   record.read → record.group → record.store → record.decide
 *
 * read (read.ts): each report's session, context, stack through the release's cached
 * artifacts, and group key; group (group.ts): the groups those keys lead to, one read per
 * project; store (store.ts): the occurrences to ClickHouse in one insert (a retried report is
 * the same row); decide (decide.ts): one Postgres transaction for the whole batch. Every write
 * is conditional, so replaying a batch (kill -9 before the spool's ack) or racing another
 * process changes nothing more. A report that cannot be recorded (its session gone:
 * `no-session`; a program error on it: `refused`) leaves the rest of its batch going on; an
 * error of the stores fails the whole batch (thrown), to be tried again.
 */
export function crashRecorder(d: CrashRecorderDeps) {
  /** Batches whose precounted new groups met the ledger, rolled back and decided again, since start. */
  let recounted = 0;

  async function recordBatch(items: readonly CrashInput[], runStep: RunStep = unobserved): Promise<BatchOutcome[]> {
    const out: BatchOutcome[] = items.map(() => ({ outcome: 'refused', error: new Error('not recorded') }));
    const projects = [...new Set(items.map((x) => x.projectId))];
    const read = await runStep('record.read', () => readReports(d, items, out));
    const { plans, joins } = await runStep('record.group', () => placeReports(d, read, projects));
    await runStep('record.store', () => storeOccurrences(d, plans));
    if (await runStep('record.decide', () => decideBatch(d, plans, joins, projects))) recounted++;
    for (const pl of plans) {
      const group = pl.group;
      if (!group) throw new Error(`crash group ${pl.groupKey} unresolved after its batch`);
      if (!pl.newGroup) d.touched?.(pl.x.projectId, group.id);
      out[pl.x.i] = { outcome: 'recorded', groupId: group.id, newGroup: pl.newGroup, regressed: pl.regressed };
    }
    return out;
  }

  return {
    recordBatch,
    /** One report: a batch of one. */
    async record(
      projectId: string,
      crash: CrashInput['crash'],
      runStep: RunStep = unobserved,
    ): Promise<RecordCrashResult> {
      const [r] = await recordBatch([{ projectId, crash }], runStep);
      if (!r) throw new Error('a batch of one recorded nothing');
      if (r.outcome === 'refused') throw r.error;
      return r;
    },
    /** Batches decided twice: a new group's occurrence was in the ledger already (since start). */
    recountedBatches: () => recounted,
  };
}

export type CrashRecorder = ReturnType<typeof crashRecorder>;
