import type { ClickHouse } from '../../stores/clickhouse/port.ts';
import { chResource, neutralised, type ChKeyset, type ChSource } from './clickhouse.ts';
import type { ExportResource } from './types.ts';

export const EVENT_FIELDS = ['id', 'type', 'timestamp', 'sequenceNumber', 'data'] as const;

export interface EventFilter {
  sessionId: string;
}

type Key = { s: number };

const keyset: ChKeyset<Key> = {
  keySelect: 'sequence_number AS s',
  order: 'sequence_number',
  orderDesc: 'sequence_number DESC',
  after: (p) => `sequence_number > {${p}s:UInt64}`,
  atMost: (p) => `sequence_number <= {${p}s:UInt64}`,
  params: (k, p) => ({ [`${p}s`]: k.s }),
};

// `data` is stored as the export's JSON text (domain/eventRows.ts): the JSON envelope parses
// it, CSV carries it as text, and an NDJSON line embeds it as an object. JSONEachRow could only
// print it as a string, so the NDJSON line is assembled here and printed raw (TabSeparatedRaw); every
// other part of it goes through toJSONString, and `data` holds no raw line breaks.
const ndjsonLine = `concat('{"id":', toJSONString(id), ',"type":', toJSONString(type), ',"timestamp":', toJSONString(timestamp),
  ',"sequenceNumber":', toString(sequence_number), ',"data":', data, '}')`;

function source(projectId: string, f: EventFilter): ChSource<Key> {
  return {
    table: 'events',
    where: 'project_id = {project:String} AND session_id = {session:String}',
    params: { project: projectId, session: f.sessionId },
    keyset,
    selects: {
      json: 'id, type, timestamp, sequence_number AS sequenceNumber, data',
      csv: `id, type, timestamp, sequence_number AS sequenceNumber, ${neutralised('data')} AS data`,
      ndjson: { select: ndjsonLine, format: 'TabSeparatedRaw' },
    },
  };
}

/** The events of one session, in sequence order; `data` is parsed back into an object for JSON. */
export function eventsExport(ch: ClickHouse): ExportResource<EventFilter> {
  return chResource(ch, 'events', EVENT_FIELDS, source, (r) => ({ ...r, data: JSON.parse(r.data as string) as unknown }));
}

/** Distinct events (by sequenceNumber) stored per session, for the sessions export. */
export async function eventCounts(ch: ClickHouse, projectId: string, sessionIds: string[]): Promise<Map<string, number>> {
  if (sessionIds.length === 0) return new Map();
  const rows = await ch.query<{ s: string; n: number }>(
    `SELECT session_id AS s, uniqExact(sequence_number) AS n FROM events
     WHERE project_id = {project:String} AND session_id IN {ids:Array(String)} GROUP BY session_id`,
    { project: projectId, ids: sessionIds },
  );
  return new Map(rows.map((r) => [r.s, Number(r.n)]));
}
