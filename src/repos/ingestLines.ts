/**
 * The ingest path's wire format to ClickHouse: one JSON line per accepted request, the project
 * and the request body as it arrived, read by the `ingest` Null table whose materialized views
 * write the rows (clickhouse/004_one_ingest_table.sql). The API never serialises an event: the
 * body's own bytes go through (the writer that chooses these bytes or a serialisation is
 * repos/ingest.ts).
 */
const CLOSE = Buffer.from('}\n');

/**
 * The line as three pieces, `[prefix, body, suffix]`: the body's bytes are not copied here; the
 * one copy is the insert's (or the spool's write, which takes the pieces as they are).
 */
export function ingestLineChunks(projectId: string, body: Buffer): [Buffer, Buffer, Buffer] {
  // projectId is this service's own UUID (from the key lookup), never client text.
  return [Buffer.from(`{"project_id":"${projectId}","body":`), body, CLOSE];
}

export function ingestLine(projectId: string, body: Buffer): Buffer {
  return Buffer.concat(ingestLineChunks(projectId, body));
}

/**
 * A line written as received, serialised again by this process: for the engine's refusal of
 * bytes JavaScript reads (a key given twice, an integer spelled 1.0 or 1e3). Parsing the line
 * reads the body as the API validated it (JSON.parse keeps the last of repeated keys).
 */
export function reserialisedLine(line: Buffer): Buffer {
  const { project_id, body } = JSON.parse(line.toString('utf8')) as { project_id: string; body: unknown };
  return ingestLine(project_id, Buffer.from(JSON.stringify(body)));
}
