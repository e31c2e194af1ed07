import { UUID_PATTERN as UUID } from '../domain/ids.ts';

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
 * `flagged`: the session this body first shows a network error of. The spool's loader sets the
 * session's flag once the line is stored (`flaggedSessionOf`); the engine skips the key.
 */
export function ingestLineChunks(projectId: string, body: Buffer, flagged?: string): [Buffer, Buffer, Buffer] {
  // projectId is this service's own UUID (from the key lookup), flagged a validated UUID: never client text.
  const flag = flagged === undefined ? '' : `${FLAG_KEY}${flagged}"`;
  return [Buffer.from(`{"project_id":"${projectId}"${flag},"body":`), body, CLOSE];
}

const FLAG_KEY = ',"network_errors":"';
const UUID_CHARS = 36;
/** Where the flag's key starts: after `{"project_id":"`, the project's UUID and its closing quote. */
const FLAG_AT = '{"project_id":"'.length + UUID_CHARS + 1;

/**
 * The project and session whose network-error flag a line carries, read from its prefix alone
 * (`head`: the line's first bytes, at least its prefix); undefined for a line without one.
 */
export function flaggedSessionOf(head: Buffer): { projectId: string; sessionId: string } | undefined {
  const keyEnd = FLAG_AT + FLAG_KEY.length;
  if (head.length < keyEnd + UUID_CHARS + 1 || head.toString('latin1', FLAG_AT, keyEnd) !== FLAG_KEY) return undefined;
  const projectId = head.toString('latin1', FLAG_AT - 1 - UUID_CHARS, FLAG_AT - 1);
  const sessionId = head.toString('latin1', keyEnd, keyEnd + UUID_CHARS);
  return UUID.test(projectId) && UUID.test(sessionId) ? { projectId, sessionId } : undefined;
}

export function ingestLine(projectId: string, body: Buffer, flagged?: string): Buffer {
  return Buffer.concat(ingestLineChunks(projectId, body, flagged));
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
