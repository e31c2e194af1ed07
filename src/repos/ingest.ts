import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { InsertBatcher, INGEST_BATCH, type QueueBudget } from '../stores/clickhouse/batcher.ts';
import { writeBody } from './ingestLines.ts';

/**
 * The ClickHouse `ingest` Null table: one group commit for every /ingest/events and
 * /ingest/network body. Its materialized views write `events` and `network_logs` (the requests
 * and the mirrored network events), so one insert carries both routes' bodies and writes one
 * part per table (clickhouse/004_one_ingest_table.sql).
 */
export function ingestRepo(ch: ClickHouse, budget: QueueBudget) {
  const writer = new InsertBatcher(ch, 'ingest', budget, INGEST_BATCH);
  return {
    /** Resolves once the body's rows are committed, in a block shared with concurrent requests. */
    add: (projectId: string, raw: Buffer | undefined, body: object, rows: number) => writeBody(writer, projectId, raw, body, rows),
    /** Resolves once everything accepted so far is written (shutdown, tests). */
    drain: () => writer.drain(),
    /** The group commit (its queue and inserts are measured). */
    batcher: writer,
  };
}

export type IngestRepo = ReturnType<typeof ingestRepo>;
