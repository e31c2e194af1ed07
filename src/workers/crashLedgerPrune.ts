import type { Config } from '../config.ts';
import type { Queryable } from '../stores/postgres/port.ts';
import { pruneLedger } from '../repos/crashGroups/index.ts';
import { type Clock, DAY_MS } from '../lib/time.ts';
import type { Sweep } from './outbox.ts';
import type { WorkerLog } from './log.ts';

/** How often a pass starts once the ledger is pruned up to its window (its age is counted in days). */
export const LEDGER_PRUNE_INTERVAL_MS = 3_600_000;

export interface CrashLedgerPruneDeps {
  config: Pick<Config, 'crashLedgerDays'>;
  pg: Queryable;
  log: WorkerLog;
  /** The pass's clock (tests move it instead of sleeping). */
  now?: Clock;
  /** Rows one DELETE takes (its transaction's size). */
  chunkRows?: number;
  /** Chunks one sweep deletes at most: a backlog goes on at the next round, not in one long sweep. */
  chunksPerSweep?: number;
}

export interface CrashLedgerPrune {
  /**
   * The outbox worker's sweep: starts a pass at most once per LEDGER_PRUNE_INTERVAL_MS and
   * deletes at most `chunksPerSweep` chunks a round, so the round's jobs wait on one bounded
   * slice of a backlog; a pass left unfinished goes on at the next round.
   */
  sweep: Sweep;
}

/**
 * Prunes the crash occurrence ledger (postgres/018, 020) to CRASH_LEDGER_DAYS: it only has to
 * remember an occurrence's id for as long as a report may be retried (docs/decisions.md, "Crash
 * batches": "The ledger's window"); the counters it guarded are unchanged by the deletion.
 */
export function crashLedgerPrune(d: CrashLedgerPruneDeps): CrashLedgerPrune {
  const now = d.now ?? Date.now;
  const chunkRows = Math.max(1, d.chunkRows ?? 10_000);
  const chunksPerSweep = Math.max(1, d.chunksPerSweep ?? 10);
  const cutoff = () => new Date(now() - d.config.crashLedgerDays * DAY_MS);
  let nextPassAt = -Infinity;
  /** Set while a pass has more to delete: the next sweep goes on with it at once. */
  let unfinished = false;

  /** Up to `maxChunks` chunks; whether the ledger is pruned up to the cutoff. */
  async function chunks(before: Date, maxChunks: number): Promise<{ deleted: number; done: boolean }> {
    let deleted = 0;
    for (let i = 0; i < maxChunks; i++) {
      const n = await pruneLedger(d.pg, before, chunkRows);
      deleted += n;
      if (n < chunkRows) return { deleted, done: true };
    }
    return { deleted, done: false };
  }

  return {
    async sweep() {
      const at = now();
      if (!unfinished && at < nextPassAt) return;
      if (!unfinished) nextPassAt = at + LEDGER_PRUNE_INTERVAL_MS;
      const { deleted, done } = await chunks(cutoff(), chunksPerSweep);
      unfinished = !done;
      if (deleted > 0) {
        d.log.info({ deleted, days: d.config.crashLedgerDays, more: unfinished }, 'crash occurrence ledger pruned');
      }
    },
  };
}
