import type { Queryable } from '../../stores/postgres/port.ts';
import { csvHeader, csvRows, ndjsonRows } from '../../domain/csv.ts';
import { concatParquet } from '../../lib/parquetConcat.ts';
import { parquetFile, type ParquetColumn } from './parquet.ts';
import type { ChangeFilter, ChangeKey, ChunkSize, Encoding, ExportResource, Row } from './types.ts';

/** A Postgres table's export: rows are read as SQL rows, shaped in JS, encoded here. */
export interface PgSource<F, R> {
  name: string;
  fields: readonly string[];
  /** The Parquet type of each field, in `fields` order. */
  parquet: readonly ParquetColumn[];
  table: string;
  columns: string;
  /** The sort key's two columns, e.g. `started_at, id`. */
  key: readonly [string, string];
  /** Filter after `project_id = $1`; pushes its values onto `params`. */
  where(filter: F, params: unknown[]): string;
  /** Output rows of a batch of SQL rows (may query elsewhere, e.g. event counts). */
  shape(projectId: string, rows: R[]): Promise<Row[]>;
}

/** The Postgres clock in Unix ms: the one clock every `updated_at` is stamped with. */
export const PG_NOW_MS = 'floor(extract(epoch from clock_timestamp()) * 1000)::bigint';

/**
 * The newest `updated_at` an incremental read may return, given a lag of `$n` ms: now − lag,
 * and never at or past the start of the oldest transaction still open that has written
 * anything (it may hold rows stamped from its start on, invisible until it commits; a cursor
 * that moved past them would never return them). Other sessions of the same role are visible in
 * `pg_stat_activity`; PGlite has one connection, so nothing else can be open there.
 */
export const changeHorizon = (lagParam: string) =>
  `LEAST(${PG_NOW_MS} - ${lagParam}, COALESCE((SELECT floor(extract(epoch from min(xact_start)) * 1000)::bigint - 1
     FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()), ${PG_NOW_MS}))`;

export function encodeRows(
  src: { fields: readonly string[]; parquet: readonly ParquetColumn[] },
  rows: Row[],
  enc: Encoding,
  header: boolean,
): string | Buffer {
  if (enc === 'parquet') return parquetFile(src.parquet, rows);
  if (enc === 'ndjson') return ndjsonRows(src.fields, rows);
  return (header ? csvHeader(src.fields) : '') + csvRows(src.fields, rows);
}

/**
 * A Postgres resource. With `filter.changes` it reads incrementally: the sort key becomes
 * (updated_at, id), rows after the cursor and up to the pinned `until` key. `lagMs` is the
 * safety lag of that window: a row is only returned once its `updated_at` is at least that old,
 * so a transaction that stamped a row and commits a little later is read by the next pull
 * instead of being passed over by a cursor that moved beyond its stamp (docs/export.md); and
 * however long a writing transaction stays open, the window ends before its start
 * (`changeHorizon`), so the lag need not be long enough for the slowest writer.
 */
export function pgResource<F extends ChangeFilter, R extends Record<string, unknown>>(
  db: Queryable,
  src: PgSource<F, R>,
  opts: { lagMs: number } = { lagMs: 0 },
): ExportResource<F> {
  const keyOf = (f: F): readonly [string, string] => (f.changes ? ['updated_at', 'id'] : src.key);
  const base = (f: F) => {
    const params: unknown[] = [undefined]; // $1 is always the project
    let where = `project_id = $1${src.where(f, params)}`;
    const c = f.changes;
    if (c) {
      params.push(c.after.t, c.after.id);
      where += ` AND (updated_at, id) > ($${params.length - 1}, $${params.length})`;
      if (c.until === null) where += ' AND false';
      else if (c.until !== undefined) {
        params.push(c.until.t, c.until.id);
        where += ` AND (updated_at, id) <= ($${params.length - 1}, $${params.length})`;
      } else {
        params.push(opts.lagMs);
        where += ` AND updated_at <= ${changeHorizon(`$${params.length}::bigint`)}`;
      }
    }
    return { params, where };
  };
  const bind = (projectId: string, params: unknown[]) => {
    params[0] = projectId;
    return params;
  };

  async function page(projectId: string, f: F, offset: number, limit: number): Promise<Row[]> {
    const { params, where } = base(f);
    const [k1, k2] = keyOf(f);
    params.push(limit, offset);
    const r = await db.query<R>(
      `SELECT ${src.columns} FROM ${src.table} WHERE ${where} ORDER BY ${k1}, ${k2} LIMIT $${params.length - 1} OFFSET $${params.length}`,
      bind(projectId, params),
    );
    return src.shape(projectId, r.rows);
  }

  /**
   * Keyset chunks of at most `size.rows` rows that stop once their rows' running size
   * (the row as text) reaches `size.bytes`: wide rows make short chunks.
   */
  async function* chunks(projectId: string, f: F, enc: Encoding, size: ChunkSize): AsyncGenerator<Buffer | string> {
    const { params, where } = base(f);
    const [k1, k2] = keyOf(f);
    bind(projectId, params);
    const endQ = await db.query<Record<string, unknown>>(
      `SELECT ${k1} AS k1, ${k2} AS k2 FROM ${src.table} WHERE ${where} ORDER BY ${k1} DESC, ${k2} DESC LIMIT 1`,
      params,
    );
    const end = endQ.rows[0];
    if (enc === 'csv') yield csvHeader(src.fields);
    // A Parquet stream needs one file even with no rows: it carries the schema.
    if (!end) {
      if (enc === 'parquet') yield parquetFile(src.parquet, []);
      return;
    }
    const n = params.length;
    // The row as text: its stored size would count a compressed (TOASTed) value small.
    const rowBytes = `octet_length(${src.table}.*::text)`;
    const same = (a: unknown, b: unknown) =>
      (a instanceof Date ? a.getTime() : String(a)) === (b instanceof Date ? b.getTime() : String(b));
    let last: { __k1: unknown; __k2: unknown } | undefined;
    for (;;) {
      const after = last === undefined ? '' : ` AND (${k1}, ${k2}) > ($${n + 5}, $${n + 6})`;
      // Rows whose running size before them is under the bound: the first row always comes.
      const r = await db.query<R & { __k1: unknown; __k2: unknown; __before: unknown }>(
        `SELECT * FROM (
           SELECT ${src.columns}, ${k1} AS __k1, ${k2} AS __k2,
                  sum(${rowBytes}) OVER (ORDER BY ${k1}, ${k2} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - ${rowBytes} AS __before
           FROM ${src.table} WHERE ${where} AND (${k1}, ${k2}) <= ($${n + 1}, $${n + 2})${after}
           ORDER BY ${k1}, ${k2} LIMIT $${n + 3}
         ) c WHERE __before < $${n + 4} ORDER BY __k1, __k2`,
        [...params, end.k1, end.k2, size.rows, size.bytes, ...(last === undefined ? [] : [last.__k1, last.__k2])],
      );
      if (r.rows.length === 0) return;
      const rows = r.rows.map(({ __k1: _a, __k2: _b, __before: _c, ...row }) => row as unknown as R);
      yield encodeRows(src, await src.shape(projectId, rows), enc, false);
      last = r.rows.at(-1);
      if (last === undefined || (same(last.__k1, end.k1) && same(last.__k2, end.k2))) return;
    }
  }

  return {
    name: src.name,
    fields: src.fields,
    async pin(projectId, f) {
      if (!f.changes || f.changes.until !== undefined) return f;
      // The window's end is fixed once: the greatest key old enough (now − lag) at this instant.
      const { params, where } = base(f);
      const r = await db.query<{ t: string | number; id: string }>(
        `SELECT updated_at AS t, id FROM ${src.table} WHERE ${where} ORDER BY updated_at DESC, id DESC LIMIT 1`,
        bind(projectId, params),
      );
      const top = r.rows[0];
      return { ...f, changes: { ...f.changes, until: top ? { t: Number(top.t), id: String(top.id) } : null } };
    },
    async keyAt(projectId, f, index): Promise<ChangeKey | undefined> {
      if (!f.changes) return undefined;
      const { params, where } = base(f);
      params.push(index);
      const r = await db.query<{ t: string | number; id: string }>(
        `SELECT updated_at AS t, id FROM ${src.table} WHERE ${where} ORDER BY updated_at, id LIMIT 1 OFFSET $${params.length}`,
        bind(projectId, params),
      );
      const k = r.rows[0];
      return k ? { t: Number(k.t), id: String(k.id) } : undefined;
    },
    async count(projectId, f) {
      const { params, where } = base(f);
      const r = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${src.table} WHERE ${where}`,
        bind(projectId, params),
      );
      return Number(r.rows[0]?.n ?? 0);
    },
    page,
    async pageEncoded(projectId, f, offset, limit, enc) {
      return encodeRows(src, await page(projectId, f, offset, limit), enc, true);
    },
    /** Keyset chunks up to the greatest key at the start, as in the ClickHouse exports. */
    chunks: (projectId, f, enc, size) =>
      enc === 'parquet' ? concatParquet(chunks(projectId, f, enc, size)) : chunks(projectId, f, enc, size),
  };
}
