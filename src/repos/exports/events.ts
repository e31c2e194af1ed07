import type { ClickHouse } from '../../stores/clickhouse/port.ts';
import { chChunks, chCount, chPage, chPageEncoded, neutralised, type ChKeyset, type ChSource } from './clickhouse.ts';
import type { ExportResource, Row } from './types.ts';

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

/** The events of one session, in sequence order. */
export function eventsExport(ch: ClickHouse): ExportResource<EventFilter> {
  return {
    name: 'events',
    fields: EVENT_FIELDS,
    count: (p, f) => chCount(ch, source(p, f)),
    async page(p, f, offset, limit) {
      const rows = await chPage<Row & { data: string }>(ch, source(p, f), offset, limit);
      return rows.map((r) => ({ ...r, data: JSON.parse(r.data) as unknown }));
    },
    pageEncoded: (p, f, offset, limit, enc) => chPageEncoded(ch, source(p, f), offset, limit, enc),
    chunks: (p, f, enc, n) => chChunks(ch, source(p, f), enc, n),
  };
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
