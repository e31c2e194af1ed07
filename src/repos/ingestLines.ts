/**
 * The ingest path's wire format to ClickHouse: one JSON line per accepted request, the project
 * and the request body as it arrived, read by the `ingest` Null table whose materialized views
 * write the rows (clickhouse/004_one_ingest_table.sql). The API never serialises an event: the
 * body's own bytes go through.
 */
import { QueueFullError } from '../domain/errors.ts';
import type { InsertBatcher } from '../stores/clickhouse/batcher.ts';

const CLOSE = Buffer.from('}\n');
const LF = 0x0a;
const CR = 0x0d;

export function ingestLine(projectId: string, body: Buffer): Buffer {
  // projectId is this service's own UUID (from the key lookup), never client text.
  return Buffer.concat([Buffer.from(`{"project_id":"${projectId}","body":`), body, CLOSE]);
}

/**
 * Writes one request body through the group commit: its bytes as received (`raw`), or the body
 * serialised once more when sanitising changed it or when it holds line breaks (a pretty-printed
 * body: a custom event's `properties` is stored as the object's own text, and the NDJSON export
 * embeds it on one line). Should the engine refuse the bytes as received (JSON that JavaScript
 * reads but ClickHouse does not read as the stored types: a key given twice, an integer spelled
 * 1.0 or 1e3), the body is written once more as this process serialises it.
 */
export async function writeBody(writer: InsertBatcher, projectId: string, raw: Buffer | undefined, body: object, rows: number): Promise<void> {
  const serialised = () => ingestLine(projectId, Buffer.from(JSON.stringify(body)));
  const asReceived = raw !== undefined && raw.indexOf(LF) < 0 && raw.indexOf(CR) < 0;
  try {
    await writer.add(asReceived ? ingestLine(projectId, raw) : serialised(), rows);
  } catch (err) {
    if (!asReceived || err instanceof QueueFullError) throw err;
    await writer.add(serialised(), rows);
  }
}
