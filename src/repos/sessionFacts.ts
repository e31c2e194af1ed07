import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { addRefusable, InsertBatcher, type QueueBudget } from '../stores/clickhouse/batcher.ts';
import type { Spool, SpoolSink } from '../stores/spool/spool.ts';
import { userKey } from '../domain/releaseHealth.ts';
import { chTime } from './crashOccurrences.ts';
import type { SessionFactSource } from './sessions.ts';

/**
 * ClickHouse `session_facts`: a row when a session starts and one when it first crashes
 * fatally, with its release (clickhouse/007_release_health.sql). Its view keeps the hourly
 * release-health states that repos/releaseHealth.ts reads. Append-only; a retry is the same row.
 */
export const SESSION_FACTS = 'session_facts';

// Session starts are about one in a hundred ingest requests: one insert per round trip is plenty.
const FACT_BATCH = { maxBatchRows: 50_000, maxQueuedRows: 200_000, maxConcurrent: 1 };

export interface SessionFactRow {
  project_id: string;
  session_id: string;
  started_at: string;
  app_version: string;
  platform: string;
  user_key: string;
  crashed: 0 | 1;
  os_version: string;
  brand: string;
  model: string;
  network_type: string;
  environment?: string;
}

/** The fact of a session (as Postgres holds it): its start, or its first fatal crash. */
export function factRow(s: SessionFactSource, crashed: boolean): SessionFactRow {
  return {
    project_id: s.project_id,
    session_id: s.id,
    started_at: chTime(Number(s.started_at)),
    app_version: s.app_version ?? '',
    platform: s.platform ?? '',
    user_key: userKey(s.user_id, s.device_fingerprint),
    crashed: crashed ? 1 : 0,
    os_version: s.os_version ?? '',
    brand: s.brand ?? '',
    model: s.model ?? '',
    network_type: s.network_type ?? '',
    environment: s.environment ?? '',
  };
}

export function sessionFactsRepo(ch: ClickHouse, budget: QueueBudget) {
  const writer = new InsertBatcher(ch, SESSION_FACTS, budget, FACT_BATCH);
  return {
    /** Resolves once the fact is committed (group commit with concurrent sessions). */
    add: (row: SessionFactRow) => writer.add(Buffer.from(`${JSON.stringify(row)}\n`), 1),
    /** Rows in bulk (the start-up backfill, the bench): one insert, no batcher. */
    insertMany: (rows: readonly SessionFactRow[]) => (rows.length ? ch.insert(SESSION_FACTS, rows) : Promise.resolve()),
    drain: () => writer.drain(),
    batcher: writer,
  };
}

export type SessionFactsRepo = ReturnType<typeof sessionFactsRepo>;

/**
 * With INGEST_SPOOL: a fact is durable once fsync'd to the facts spool (a session start waits for
 * that, not for an insert), and the spool's loader inserts a segment's facts at once through the
 * repo's group commit. Every session_facts insert also writes a part for each release view: in
 * rounds of a few starts each, those inserts took a third or more of the engine's CPU per stored
 * event row under the ingest load (docs/bench.md, "Fifth session of 2026-11-27").
 */
export function spooledFacts(repo: SessionFactsRepo, spool: Spool): SessionFactsRepo {
  return { ...repo, add: (row) => spool.append([Buffer.from(`${JSON.stringify(row)}\n`)], 1) };
}

/** The facts spool's loader: a fact the engine refuses is set aside; a store that is down rejects the load. */
export function factsSpoolSink(repo: SessionFactsRepo): SpoolSink {
  return async (records, load) => {
    const refused = await addRefusable(
      repo.batcher,
      records,
      (r) => r.chunks,
      (r) => r.rows,
      { background: load.caughtUp },
    );
    return { refused: refused.map(({ item, error }) => ({ record: item, error })) };
  };
}
