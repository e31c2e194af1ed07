import type { ClickHouse } from '../../stores/clickhouse/port.ts';
import { chResource, neutralised, type ChKeyset, type ChSource } from './clickhouse.ts';
import type { DateFilter, ExportResource } from './types.ts';

export const NETWORK_FIELDS = ['id', 'sessionId', 'method', 'url', 'statusCode', 'duration', 'error', 'timestamp'] as const;

type Key = { t: number; id: string };

const ms = (p: string) => `fromUnixTimestamp64Milli({${p}:Int64}, 'UTC')`;

// The plain `timestamp` bound lets ClickHouse prune by the primary key; the tuple decides ties.
const keyset: ChKeyset<Key> = {
  keySelect: 'toUnixTimestamp64Milli(timestamp) AS t, id',
  order: 'timestamp, id',
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
    table: 'network_logs',
    where,
    params,
    keyset,
    selects: {
      json,
      csv: `id, session_id AS sessionId, ${neutralised('method')} AS method, ${neutralised('url')} AS url,
            status_code AS statusCode, duration, ${neutralised('error')} AS error, timestamp`,
      ndjson: { select: json, format: 'JSONEachRow' },
    },
  };
}

/** Network logs of a project, ordered by (timestamp, id), filtered on timestamp. */
export function networkExport(ch: ClickHouse): ExportResource<DateFilter> {
  return chResource(ch, 'network', NETWORK_FIELDS, source);
}
