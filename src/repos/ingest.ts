import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { InsertBatcher, INGEST_BATCH, type QueueBudget } from '../stores/clickhouse/batcher.ts';
import { QueueFullError } from '../domain/errors.ts';
import { ingestLine } from './ingestLines.ts';

const LF = 0x0a;
const CR = 0x0d;

/**
 * Writes one request body through the group commit: its bytes as received (`raw`), or the body
 * serialised once more when sanitising changed it or when it holds line breaks (a pretty-printed
 * body: a custom event's `properties` is stored as the object's own text, and the NDJSON export
 * embeds it on one line). Should the engine refuse the bytes as received (JSON that JavaScript
 * reads but ClickHouse does not read as the stored types: a key given twice, an integer spelled
 * 1.0 or 1e3), the body is written once more as this process serialises it.
 */
async function writeBody(writer: InsertBatcher, projectId: string, raw: Buffer | undefined, body: object, rows: number): Promise<void> {
  const serialised = () => ingestLine(projectId, Buffer.from(JSON.stringify(body)));
  const asReceived = raw !== undefined && raw.indexOf(LF) < 0 && raw.indexOf(CR) < 0;
  try {
    await writer.add(asReceived ? ingestLine(projectId, raw) : serialised(), rows);
  } catch (err) {
    if (!asReceived || err instanceof QueueFullError) throw err;
    await writer.add(serialised(), rows);
  }
}

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
