import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { isNetworkError } from '../domain/sessionState.ts';
import { chResource, neutralised, type ChKeyset, type ChSource } from './exportCore/clickhouse.ts';
import type { DateFilter } from './exportCore/types.ts';
import { pageEnvelope } from '../domain/paging.ts';

/** The ClickHouse `network_logs` table (written through the `ingest` table, repos/ingest.ts): the export and the dashboard list. */
const TABLE = 'network_logs';

export const NETWORK_FIELDS = [
  'id',
  'sessionId',
  'method',
  'url',
  'statusCode',
  'duration',
  'error',
  'timestamp',
] as const;

type Key = { t: number; id: string };

const ms = (p: string) => `fromUnixTimestamp64Milli({${p}:Int64}, 'UTC')`;

// The plain `timestamp` bound lets ClickHouse prune by the primary key; the tuple decides ties.
const keyset: ChKeyset<Key> = {
  keySelect: 'toUnixTimestamp64Milli(timestamp) AS t, id',
  order: 'timestamp, id',
  keyOrder: 't, id',
  orderDesc: 'timestamp DESC, id DESC',
  after: (p) => `timestamp >= ${ms(`${p}t`)} AND (timestamp, id) > (${ms(`${p}t`)}, {${p}id:String})`,
  atMost: (p) => `timestamp <= ${ms(`${p}t`)} AND (timestamp, id) <= (${ms(`${p}t`)}, {${p}id:String})`,
  params: (k, p) => ({ [`${p}t`]: k.t, [`${p}id`]: k.id }),
};

const json = 'id, session_id AS sessionId, method, url, status_code AS statusCode, duration, error, timestamp';

// Stored timestamps lie in [0, 1e13] ms (ingestion schema); bounds outside are clamped into
// DateTime64's range without changing which rows match.
const clampMs = (v: number) => Math.min(Math.max(v, -1), 10_000_000_000_001);

function source(projectId: string, f: DateFilter): ChSource<Key> {
  let where = 'project_id = {project:String}';
  const params: Record<string, unknown> = { project: projectId };
  if (f.fromMs !== undefined) {
    where += ` AND timestamp >= ${ms('fromMs')}`;
    params.fromMs = clampMs(f.fromMs);
  }
  if (f.toMsExclusive !== undefined) {
    where += ` AND timestamp < ${ms('toMs')}`;
    params.toMs = clampMs(f.toMsExclusive);
  }
  return {
    table: TABLE,
    where,
    params,
    keyset,
    // The text columns' lengths and ~100 bytes for the rest (a UUID, a timestamp, three numbers):
    // near the CSV row's size, and a fraction of byteSize(*)'s cost (docs/bench.md).
    rowBytes: 'length(id) + length(method) + length(url) + ifNull(length(error), 0) + 100',
    selects: {
      json,
      csv: `id, session_id AS sessionId, ${neutralised('method')} AS method, ${neutralised('url')} AS url,
            status_code AS statusCode, duration, ${neutralised('error')} AS error, timestamp`,
      ndjson: { select: json, format: 'JSONEachRow' },
      parquet: `id, toString(session_id) AS sessionId, toString(method) AS method, url, status_code AS statusCode,
                duration, error, timestamp`,
    },
  };
}

const orNull = (v: number | null) => (v === null ? null : Number(v));

export function networkLogsRepo(ch: ClickHouse) {
  return {
    /** Network logs of a project, ordered by (timestamp, id), filtered on timestamp. */
    export: chResource(ch, 'network', NETWORK_FIELDS, source),

    /** One session's requests in time order, with whether each failed. */
    async forSession(projectId: string, sessionId: string, page: number, limit: number) {
      const where = 'project_id = {p:String} AND session_id = {s:String}';
      const params = { p: projectId, s: sessionId };
      const total = await ch.query<{ n: number }>(`SELECT count() AS n FROM ${TABLE} FINAL WHERE ${where}`, params);
      const rows = await ch.query<{
        id: string;
        method: string;
        url: string;
        status_code: number | null;
        duration: number;
        request_size: number | null;
        response_size: number | null;
        error: string | null;
        timestamp: string;
      }>(
        `SELECT id, method, url, status_code, duration, request_size, response_size, error, timestamp FROM ${TABLE} FINAL
         WHERE ${where} ORDER BY timestamp, id LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
        { ...params, limit, offset: (page - 1) * limit },
      );
      const data = rows.map((n) => ({
        id: n.id,
        method: n.method,
        url: n.url,
        statusCode: orNull(n.status_code),
        duration: Number(n.duration),
        requestSize: orNull(n.request_size),
        responseSize: orNull(n.response_size),
        error: n.error,
        timestamp: n.timestamp,
        failed: isNetworkError({ statusCode: orNull(n.status_code), error: n.error }),
      }));
      return pageEnvelope(data, Number(total[0]?.n ?? 0), page, limit);
    },
  };
}

export type NetworkLogsRepo = ReturnType<typeof networkLogsRepo>;
