import type { Queryable } from '../../stores/postgres/port.ts';
import { csvHeader, csvRows, ndjsonRows } from '../../domain/csv.ts';
import type { Encoding, ExportResource, Row } from './types.ts';

/** A Postgres table's export: rows are read as SQL rows, shaped in JS, encoded by domain/csv.ts. */
export interface PgSource<F, R> {
  name: string;
  fields: readonly string[];
  table: string;
  columns: string;
  /** The sort key's two columns, e.g. `started_at, id`. */
  key: readonly [string, string];
  /** Filter after `project_id = $1`; pushes its values onto `params`. */
  where(filter: F, params: unknown[]): string;
  /** Output rows of a batch of SQL rows (may query elsewhere, e.g. event counts). */
  shape(projectId: string, rows: R[]): Promise<Row[]>;
}

export function encodeRows(fields: readonly string[], rows: Row[], enc: Encoding, header: boolean): string {
  if (enc === 'ndjson') return ndjsonRows(fields, rows);
  return (header ? csvHeader(fields) : '') + csvRows(fields, rows);
}

export function pgResource<F, R extends Record<string, unknown>>(db: Queryable, src: PgSource<F, R>): ExportResource<F> {
  const [k1, k2] = src.key;
  const order = `${k1}, ${k2}`;
  const base = (f: F) => {
    const params: unknown[] = [];
    const projectParam = () => params.length; // $1 is always the project
    params.push(undefined);
    const where = `project_id = $${projectParam()}` + src.where(f, params);
    return { params, where };
  };
  const bind = (projectId: string, params: unknown[]) => {
    params[0] = projectId;
    return params;
  };

  async function page(projectId: string, f: F, offset: number, limit: number): Promise<Row[]> {
    const { params, where } = base(f);
    params.push(limit, offset);
    const r = await db.query<R>(
      `SELECT ${src.columns} FROM ${src.table} WHERE ${where} ORDER BY ${order} LIMIT $${params.length - 1} OFFSET $${params.length}`,
      bind(projectId, params),
    );
    return src.shape(projectId, r.rows);
  }

  return {
    name: src.name,
    fields: src.fields,
    async count(projectId, f) {
      const { params, where } = base(f);
      const r = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${src.table} WHERE ${where}`, bind(projectId, params));
      return Number(r.rows[0]?.n ?? 0);
    },
    page,
    async pageEncoded(projectId, f, offset, limit, enc) {
      return encodeRows(src.fields, await page(projectId, f, offset, limit), enc, true);
    },
    /** Keyset chunks up to the greatest key at the start, as in the ClickHouse exports. */
    async *chunks(projectId, f, enc, chunkRows) {
      const { params, where } = base(f);
      bind(projectId, params);
      const endQ = await db.query<Record<string, unknown>>(
        `SELECT ${k1} AS k1, ${k2} AS k2 FROM ${src.table} WHERE ${where} ORDER BY ${k1} DESC, ${k2} DESC LIMIT 1`,
        params,
      );
      const end = endQ.rows[0];
      if (enc === 'csv') yield csvHeader(src.fields);
      if (!end) return;
      const n = params.length;
      let last: Record<string, unknown> | undefined;
      for (;;) {
        const after = last === undefined ? '' : ` AND (${k1}, ${k2}) > ($${n + 4}, $${n + 5})`;
        const r = await db.query<R>(
          `SELECT ${src.columns} FROM ${src.table} WHERE ${where} AND (${k1}, ${k2}) <= ($${n + 1}, $${n + 2})${after}
           ORDER BY ${order} LIMIT $${n + 3}`,
          [...params, end.k1, end.k2, chunkRows, ...(last === undefined ? [] : [last[k1], last[k2]])],
        );
        if (r.rows.length === 0) return;
        yield encodeRows(src.fields, await src.shape(projectId, r.rows), enc, false);
        if (r.rows.length < chunkRows) return;
        last = r.rows[r.rows.length - 1];
      }
    },
  };
}
