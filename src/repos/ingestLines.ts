/**
 * The ingest path's wire format to ClickHouse: one JSON line per accepted request, the project
 * and the request body as it arrived, read by the `events_ingest` / `network_ingest` Null
 * tables whose materialized views write the rows (clickhouse/002_ingest_pipeline.sql). The API
 * never serialises an event: the body's own bytes go through.
 */
const CLOSE = Buffer.from('}\n');

export function ingestLine(projectId: string, body: Buffer): Buffer {
  // projectId is this service's own UUID (from the key lookup), never client text.
  return Buffer.concat([Buffer.from(`{"project_id":"${projectId}","body":`), body, CLOSE]);
}

/** The line for a body known only as parsed (sanitising changed it): serialised once more. */
export function ingestLineOf(projectId: string, body: Buffer | undefined, parsed: unknown): Buffer {
  return ingestLine(projectId, body ?? Buffer.from(JSON.stringify(parsed)));
}
