/**
 * The ingest path's wire format to ClickHouse: one JSON line per accepted request, the project
 * and the request body as it arrived, read by the `events_ingest` / `network_ingest` Null
 * tables whose materialized views write the rows (clickhouse/002_ingest_pipeline.sql). The API
 * never serialises an event: the body's own bytes go through.
 */
import { QueueFullError } from '../domain/errors.ts';
import type { InsertBatcher } from '../stores/clickhouse/batcher.ts';

const CLOSE = Buffer.from('}\n');

export function ingestLine(projectId: string, body: Buffer): Buffer {
  // projectId is this service's own UUID (from the key lookup), never client text.
  return Buffer.concat([Buffer.from(`{"project_id":"${projectId}","body":`), body, CLOSE]);
}

/**
 * Writes one request body through a table's group commit: its bytes as received (`raw`), or,
 * when sanitising changed the parsed body, the body serialised once more. Should the engine
 * refuse the bytes as received (JSON that JavaScript reads but ClickHouse does not, such as a
 * key given twice), the body is written once more as this process serialises it.
 */
export async function writeBody(writer: InsertBatcher, projectId: string, raw: Buffer | undefined, body: object, rows: number): Promise<void> {
  const serialised = () => ingestLine(projectId, Buffer.from(JSON.stringify(body)));
  try {
    await writer.add(raw ? ingestLine(projectId, raw) : serialised(), rows);
  } catch (err) {
    if (raw === undefined || err instanceof QueueFullError) throw err;
    await writer.add(serialised(), rows);
  }
}
