import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { isoMs } from '../lib/time.ts';
import { NotFoundError } from '../domain/errors.ts';
import { concatParquet } from '../lib/parquetConcat.ts';
import { chChunks, chCount, chPage, type ChKeyset, type ChSource } from './exportCore/clickhouse.ts';
import { encodeRows } from './exportCore/postgres.ts';
import type { ParquetColumn } from './exportCore/parquet.ts';
import type {
  ChangeFilter,
  ChangeKey,
  ChunkSize,
  DateFilter,
  Encoding,
  ExportResource,
  Row,
} from './exportCore/types.ts';

import { OCCURRENCES } from './crashOccurrences.ts';

/**
 * GET /export/crash-occurrences: every occurrence with its crash context, by (occurredAt, id).
 * Rows are read from ClickHouse as JSON and encoded here rather than by ClickHouse, because
 * each needs its group's id, which lives in Postgres (an occurrence knows its group key; merges
 * may lead several keys to one group): a page or a chunk looks up the ids of the keys it holds.
 *
 * With `updatedSince`/`cursor` (`filter.changes`) rows come in the order they arrived,
 * (ingested_at, id), the insert's time on the ClickHouse clock (clickhouse/011): an ETL job
 * resumes after its last row, late reports of old crashes included. A row is returned once it
 * arrived at least `lagMs` ago, so an insert stamped before another one but committed after it
 * is read by the next pull instead of being passed over by the cursor (docs/export.md).
 */
export interface OccurrenceExportFilter extends DateFilter, ChangeFilter {
  groupId?: string;
  environment?: string;
  levels?: string[];
  /** set by `pin` from groupId */
  groupKeys?: string[];
}

export const OCCURRENCE_FIELDS = [
  'id',
  'groupId',
  'sessionId',
  'occurredAt',
  'level',
  'environment',
  'userId',
  'message',
  'stackTrace',
  'symbolicatedStack',
  'isFatal',
  'handled',
  'platform',
  'osVersion',
  'appVersion',
  'brand',
  'model',
  'tags',
  'context',
  'breadcrumbs',
  'dropped',
] as const;

const REQUIRED = new Set([
  'id',
  'sessionId',
  'occurredAt',
  'level',
  'environment',
  'message',
  'stackTrace',
  'isFatal',
  'handled',
  'tags',
  'breadcrumbs',
  'dropped',
]);

// Objects are JSON text in Parquet, as in CSV: one column, whatever their shape.
const PARQUET: readonly ParquetColumn[] = OCCURRENCE_FIELDS.map((name) => ({
  name,
  type: name === 'occurredAt' ? 'timestamp' : name === 'isFatal' || name === 'handled' ? 'boolean' : 'string',
  nullable: !REQUIRED.has(name),
}));

interface ChRow {
  at: number;
  id: string;
  group_key: string;
  session_id: string;
  level: string;
  environment: string;
  user_id: string | null;
  message: string;
  stack_trace: string;
  symbolicated_stack: string;
  is_fatal: boolean | number;
  handled: boolean | number;
  platform: string | null;
  os_version: string | null;
  app_version: string | null;
  brand: string | null;
  model: string | null;
  tags: Record<string, string>;
  context: string;
  breadcrumbs: string;
  dropped: string;
}

const SELECT = `toUnixTimestamp64Milli(occurred_at) AS at, id, group_key, toString(session_id) AS session_id, level,
  environment,
  user_id, message, stack_trace, symbolicated_stack, is_fatal, handled, platform, os_version, app_version, brand, model,
  tags, context, breadcrumbs, dropped`;

type Key = { t: number; id: string };
const ms = (p: string) => `fromUnixTimestamp64Milli({${p}:Int64}, 'UTC')`;
const keyset: ChKeyset<Key> = {
  keySelect: 'toUnixTimestamp64Milli(occurred_at) AS t, id',
  order: 'occurred_at, id',
  keyOrder: 't, id',
  orderDesc: 'occurred_at DESC, id DESC',
  after: (p) => `occurred_at >= ${ms(`${p}t`)} AND (occurred_at, id) > (${ms(`${p}t`)}, {${p}id:String})`,
  atMost: (p) => `occurred_at <= ${ms(`${p}t`)} AND (occurred_at, id) <= (${ms(`${p}t`)}, {${p}id:String})`,
  params: (k, p) => ({ [`${p}t`]: k.t, [`${p}id`]: k.id }),
};

/** Arrival order (incremental reads); ids of one millisecond in id order. */
const arrival: ChKeyset<Key> = {
  keySelect: 'toUnixTimestamp64Milli(ingested_at) AS t, id',
  order: 'ingested_at, id',
  keyOrder: 't, id',
  orderDesc: 'ingested_at DESC, id DESC',
  after: (p) => `ingested_at >= ${ms(`${p}t`)} AND (ingested_at, id) > (${ms(`${p}t`)}, {${p}id:String})`,
  atMost: (p) => `ingested_at <= ${ms(`${p}t`)} AND (ingested_at, id) <= (${ms(`${p}t`)}, {${p}id:String})`,
  params: (k, p) => ({ [`${p}t`]: k.t, [`${p}id`]: k.id }),
};

const clampMs = (v: number) => Math.min(Math.max(v, -1), 10_000_000_000_001);

function sourceOf(projectId: string, f: OccurrenceExportFilter, lagMs: number): ChSource<Key> {
  let where = 'project_id = {project:String}';
  const params: Record<string, unknown> = { project: projectId };
  const c = f.changes;
  if (c) {
    where += ` AND ${arrival.after('ca')}`;
    Object.assign(params, arrival.params(c.after, 'ca'));
    if (c.until === null) where += ' AND false';
    else if (c.until !== undefined) {
      where += ` AND ${arrival.atMost('cu')}`;
      Object.assign(params, arrival.params(c.until, 'cu'));
    } else {
      where += ' AND ingested_at <= now64(3) - toIntervalMillisecond({lagMs:UInt64})';
      params.lagMs = lagMs;
    }
  }
  if (f.groupKeys !== undefined) {
    where += ' AND group_key IN {keys:Array(String)}';
    params.keys = f.groupKeys;
  }
  if (f.environment !== undefined) {
    where += ' AND environment = {env:String}';
    params.env = f.environment;
  }
  if (f.levels !== undefined) {
    where += ' AND level IN {levels:Array(String)}';
    params.levels = f.levels;
  }
  if (f.fromMs !== undefined) {
    where += ` AND occurred_at >= ${ms('fromMs')}`;
    params.fromMs = clampMs(f.fromMs);
  }
  if (f.toMsExclusive !== undefined) {
    where += ` AND occurred_at < ${ms('toMs')}`;
    params.toMs = clampMs(f.toMsExclusive);
  }
  const ndjson = { select: SELECT, format: 'JSONEachRow' as const };
  return {
    table: OCCURRENCES,
    where,
    params,
    keyset: c ? arrival : keyset,
    selects: { json: SELECT, csv: SELECT, ndjson, parquet: SELECT },
  };
}

const parsed = (text: string, empty: unknown) => {
  if (text === '') return empty;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return empty;
  }
};

const asText = (r: Row): Row =>
  Object.fromEntries(
    Object.entries(r).map(([k, v]) => [k, v !== null && typeof v === 'object' ? JSON.stringify(v) : v]),
  );

export function crashOccurrenceExport(
  ch: ClickHouse,
  groups: {
    byKeys(projectId: string, keys: string[]): Promise<{ id: string; group_key: string }[]>;
    byId(projectId: string, id: string): Promise<string[]>;
  },
  opts: { lagMs: number } = { lagMs: 0 },
): ExportResource<OccurrenceExportFilter> {
  const source = (projectId: string, f: OccurrenceExportFilter) => sourceOf(projectId, f, opts.lagMs);
  /** The arrival key of the row at `offset` of the order (`desc`: from the end). */
  async function keyOf(projectId: string, f: OccurrenceExportFilter, offset: number, desc: boolean) {
    const src = source(projectId, f);
    const [k] = await ch.query<{ t: number; id: string }>(
      `SELECT ${arrival.keySelect} FROM ${OCCURRENCES} FINAL WHERE ${src.where}
       ORDER BY ${desc ? arrival.orderDesc : arrival.order} LIMIT 1 OFFSET {offset:UInt64}`,
      { ...src.params, offset },
    );
    return k ? { t: Number(k.t), id: k.id } : undefined;
  }

  async function shape(projectId: string, rows: ChRow[]): Promise<Row[]> {
    const known = await groups.byKeys(projectId, [...new Set(rows.map((r) => r.group_key))]);
    const ids = new Map(known.map((g) => [g.group_key, g.id]));
    return rows.map((r) => ({
      id: r.id,
      // null: the group's row is being created by this very occurrence (the occurrence is written first)
      groupId: ids.get(r.group_key) ?? null,
      sessionId: r.session_id,
      occurredAt: isoMs(Number(r.at)),
      level: r.level,
      environment: r.environment,
      userId: r.user_id,
      message: r.message,
      stackTrace: r.stack_trace,
      symbolicatedStack: r.symbolicated_stack || null,
      isFatal: Boolean(r.is_fatal),
      handled: Boolean(r.handled),
      platform: r.platform,
      osVersion: r.os_version,
      appVersion: r.app_version,
      brand: r.brand,
      model: r.model,
      tags: r.tags,
      context: parsed(r.context, null),
      breadcrumbs: parsed(r.breadcrumbs, []),
      dropped: parsed(r.dropped, []),
    }));
  }
  const src = { fields: OCCURRENCE_FIELDS, parquet: PARQUET };
  // CSV writes objects as JSON text itself (domain/csv.ts); the Parquet writer needs the text.
  const encode = (rows: Row[], enc: 'csv' | 'ndjson' | 'parquet', header: boolean) =>
    encodeRows(src, enc === 'parquet' ? rows.map(asText) : rows, enc, header);

  async function page(projectId: string, f: OccurrenceExportFilter, offset: number, limit: number) {
    return shape(projectId, await chPage<ChRow>(ch, source(projectId, f), offset, limit));
  }

  /** ClickHouse's keyset chunks (bounded in rows and bytes) as JSON lines, each chunk shaped and encoded here. */
  async function* chunks(projectId: string, f: OccurrenceExportFilter, enc: Encoding, size: ChunkSize) {
    let first = true;
    for await (const buf of chChunks(ch, source(projectId, f), 'ndjson', size)) {
      const rows = buf
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as ChRow);
      yield encode(await shape(projectId, rows), enc, first);
      first = false;
    }
    // No rows: a CSV keeps its header and a Parquet stream its schema.
    if (first && enc !== 'ndjson') yield encode([], enc, true);
  }

  return {
    name: 'crash-occurrences',
    fields: OCCURRENCE_FIELDS,
    async pin(projectId, f) {
      let pinned = f;
      if (f.groupId !== undefined && f.groupKeys === undefined) {
        const keys = await groups.byId(projectId, f.groupId);
        if (keys.length === 0) throw new NotFoundError('Crash group not found');
        pinned = { ...pinned, groupKeys: keys };
      }
      const c = pinned.changes;
      if (c && c.until === undefined) {
        // The window's end, fixed once: the last row that arrived at least lagMs ago, now.
        pinned = { ...pinned, changes: { ...c, until: (await keyOf(projectId, pinned, 0, true)) ?? null } };
      }
      return pinned;
    },
    keyAt: async (projectId, f, index): Promise<ChangeKey | undefined> =>
      f.changes ? keyOf(projectId, f, index, false) : undefined,
    count: (projectId, f) => chCount(ch, source(projectId, f)),
    page,
    async pageEncoded(projectId, f, offset, limit, enc) {
      return encode(await page(projectId, f, offset, limit), enc, true);
    },
    chunks: (projectId, f, enc, size) =>
      enc === 'parquet' ? concatParquet(chunks(projectId, f, enc, size)) : chunks(projectId, f, enc, size),
  };
}
