import { csvHeader } from '../../domain/csv.ts';
import { encodeRows } from './postgres.ts';
import { parquetFile, type ParquetColumn } from './parquet.ts';
import type { ExportResource, Row } from './types.ts';

/**
 * An export of rows computed per request rather than read from one table (release health: a
 * few rows per release, merged from ClickHouse and Postgres). The rows are bounded (one per
 * release), so they are computed once per request (`pin`) and paged in memory; a stream is the
 * same rows in chunks, a Parquet stream one file.
 */
export interface ComputedSource<F> {
  name: string;
  fields: readonly string[];
  parquet: readonly ParquetColumn[];
  rows(projectId: string, filter: F): Promise<Row[]>;
}

export function computedResource<F extends object>(src: ComputedSource<F>): ExportResource<F> {
  // The rows of a pinned filter: the count, the page and the chunks of one request read the same rows.
  const pinned = new WeakMap<object, Promise<Row[]>>();
  const rowsOf = (projectId: string, f: F) => {
    let r = pinned.get(f);
    if (!r) {
      r = src.rows(projectId, f);
      pinned.set(f, r);
    }
    return r;
  };
  return {
    name: src.name,
    fields: src.fields,
    async pin(projectId, f) {
      const copy = { ...f };
      pinned.set(copy, src.rows(projectId, f));
      return copy;
    },
    async count(projectId, f) {
      return (await rowsOf(projectId, f)).length;
    },
    async page(projectId, f, offset, limit) {
      return (await rowsOf(projectId, f)).slice(offset, offset + limit);
    },
    async pageEncoded(projectId, f, offset, limit, enc) {
      return encodeRows(src, (await rowsOf(projectId, f)).slice(offset, offset + limit), enc, true);
    },
    async *chunks(projectId, f, enc, size) {
      const rows = await rowsOf(projectId, f);
      if (enc === 'parquet') {
        yield parquetFile(src.parquet, rows);
        return;
      }
      if (enc === 'csv') yield csvHeader(src.fields);
      // A chunk ends at size.rows rows or once its encoded rows reach size.bytes, as the stores' chunks do.
      let parts: (Buffer | string)[] = [];
      let bytes = 0;
      for (const row of rows) {
        const part = encodeRows(src, [row], enc, false);
        parts.push(part);
        bytes += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
        if (parts.length >= size.rows || bytes >= size.bytes) {
          yield parts.join('');
          parts = [];
          bytes = 0;
        }
      }
      if (parts.length) yield parts.join('');
    },
  };
}
