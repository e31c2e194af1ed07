import { NARROW_READ_SETTINGS, type ClickHouse } from '../stores/clickhouse/port.ts';
import { chResource, neutralised, type ChKeyset, type ChSource } from './exportCore/clickhouse.ts';
import type { ExportResource } from './exportCore/types.ts';

/** The ClickHouse `events` table (written through the `ingest` table, repos/ingest.ts): the export and the dashboard timeline. */
const TABLE = 'events';

export const EVENT_FIELDS = ['id', 'type', 'timestamp', 'sequenceNumber', 'data'] as const;

export interface EventFilter {
  sessionId: string;
}

type Key = { s: number };

const keyset: ChKeyset<Key> = {
  keySelect: 'sequence_number AS s',
  order: 'sequence_number',
  keyOrder: 's',
  orderDesc: 'sequence_number DESC',
  after: (p) => `sequence_number > {${p}s:UInt64}`,
  atMost: (p) => `sequence_number <= {${p}s:UInt64}`,
  params: (k, p) => ({ [`${p}s`]: k.s }),
};

// `data` is the export's JSON text, computed by the table's ALIAS (clickhouse/002_ingest_pipeline.sql;
// test/helpers/payloads.ts's eventData states the same shape for the tests): the JSON envelope parses
// it, CSV carries it as text, and an NDJSON line embeds it as an object. JSONEachRow could only
// print it as a string, so the NDJSON line is assembled here and printed raw (TabSeparatedRaw); every
// other part of it goes through toJSONString, and `data` holds no raw line breaks.
const ndjsonLine = `concat('{"id":', toJSONString(id), ',"type":', toJSONString(type), ',"timestamp":', toJSONString(timestamp),
  ',"sequenceNumber":', toString(sequence_number), ',"data":', data, '}')`;

function source(projectId: string, f: EventFilter): ChSource<Key> {
  return {
    table: TABLE,
    where: 'project_id = {project:String} AND session_id = {session:String}',
    params: { project: projectId, session: f.sessionId },
    keyset,
    // One session's rows: the sort key's prefix, a few granules of each part.
    settings: NARROW_READ_SETTINGS,
    selects: {
      json: 'id, type, timestamp, sequence_number AS sequenceNumber, data',
      csv: `id, type, timestamp, sequence_number AS sequenceNumber, ${neutralised('data')} AS data`,
      ndjson: { select: ndjsonLine, format: 'TabSeparatedRaw' },
      // `data` stays its JSON text (a string column), as in CSV.
      parquet: 'id, type, timestamp, toInt64(sequence_number) AS sequenceNumber, data',
    },
  };
}

export interface TimelineEvent {
  id: string;
  type: string;
  sequenceNumber: number;
  timestamp: string;
  data: Record<string, unknown>;
}

/** An event as a crash's timeline reads it: its time (ms), type and export `data`. */
export interface SessionEventAt {
  at: number;
  type: string;
  data: Record<string, unknown>;
}

export function eventsRepo(ch: ClickHouse) {
  return {
    /** The events of one session, in sequence order; `data` is parsed back into an object for JSON. */
    export: chResource(ch, 'events', EVENT_FIELDS, source, (r) => ({
      ...r,
      data: JSON.parse(String(r.data)) as Record<string, unknown>,
    })),

    /** Distinct events (by sequenceNumber) stored per session. */
    async countBySession(projectId: string, sessionIds: string[]): Promise<Map<string, number>> {
      if (sessionIds.length === 0) return new Map();
      const rows = await ch.query<{ s: string; n: number }>(
        `SELECT session_id AS s, uniqExact(sequence_number) AS n FROM ${TABLE}
         WHERE project_id = {project:String} AND session_id IN {ids:Array(String)} GROUP BY session_id`,
        { project: projectId, ids: sessionIds },
        NARROW_READ_SETTINGS,
      );
      return new Map(rows.map((r) => [r.s, Number(r.n)]));
    },

    /** Events in sequence order, keyset-paged on sequenceNumber (a session may have many). */
    async timeline(projectId: string, sessionId: string, afterSeq: number | undefined, limit: number) {
      const rows = await ch.query<{
        sequence_number: number;
        id: string;
        type: string;
        timestamp: string;
        data: string;
      }>(
        `SELECT sequence_number, id, type, timestamp, data FROM ${TABLE} FINAL
         WHERE project_id = {p:String} AND session_id = {s:String} AND sequence_number > {after:Int64}
         ORDER BY sequence_number LIMIT {limit:UInt32}`,
        { p: projectId, s: sessionId, after: afterSeq ?? -1, limit: limit + 1 },
        NARROW_READ_SETTINGS,
      );
      const page: TimelineEvent[] = rows.slice(0, limit).map((e) => ({
        id: e.id,
        type: e.type,
        sequenceNumber: Number(e.sequence_number),
        timestamp: e.timestamp,
        data: JSON.parse(e.data) as Record<string, unknown>,
      }));
      const last = page[page.length - 1];
      return { data: page, nextAfter: rows.length > limit && last ? last.sequenceNumber : null };
    },

    /** A session's last `limit` events at or before `atMs` (the trail before a crash), in time order. */
    async before(projectId: string, sessionId: string, atMs: number, limit: number): Promise<SessionEventAt[]> {
      const rows = await ch.query<{ at: number; type: string; data: string }>(
        `SELECT toUnixTimestamp64Milli(timestamp) AS at, type, data FROM ${TABLE} FINAL
         WHERE project_id = {p:String} AND session_id = {s:String}
           AND timestamp <= fromUnixTimestamp64Milli({at:Int64}, 'UTC')
         ORDER BY timestamp DESC, sequence_number DESC LIMIT {limit:UInt32}`,
        { p: projectId, s: sessionId, at: atMs, limit },
        NARROW_READ_SETTINGS,
      );
      return rows.reverse().map((r) => ({
        at: Number(r.at),
        type: r.type,
        data: JSON.parse(r.data) as SessionEventAt['data'],
      }));
    },
  };
}

export type EventsRepo = ReturnType<typeof eventsRepo>;
export type EventsExport = ExportResource<EventFilter>;
