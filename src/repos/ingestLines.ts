/**
 * The ingest path's wire format to ClickHouse: one JSON line per accepted request, the project
 * and the request body as it arrived, read by the `ingest` Null table whose materialized views
 * write the rows (clickhouse/004_one_ingest_table.sql). The API never serialises an event: the
 * body's own bytes go through (the writer that chooses these bytes or a serialisation is
 * repos/ingest.ts).
 */
const CLOSE = Buffer.from('}\n');

export function ingestLine(projectId: string, body: Buffer): Buffer {
  // projectId is this service's own UUID (from the key lookup), never client text.
  return Buffer.concat([Buffer.from(`{"project_id":"${projectId}","body":`), body, CLOSE]);
}
