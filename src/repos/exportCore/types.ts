export type Row = Record<string, unknown>;

/** The encodings besides the JSON envelope: CSV (with a header row), NDJSON and Parquet. */
export type Encoding = 'csv' | 'ndjson' | 'parquet';

import type { ChangeKey } from '../../domain/changeCursor.ts';

export type { ChangeKey };

/**
 * An incremental read (updatedSince / cursor): rows whose key is after `after`, in
 * (updatedAt, id) order. `until` is pinned once per request by the resource (`pin`): the
 * greatest key at or before the safety horizon (now − lag), or null when none is, so the
 * count, the page and every stream chunk of one request read the same window.
 */
export interface ChangeWindow {
  after: ChangeKey;
  until?: ChangeKey | null;
}

/** The filter part shared by the resources that can be read incrementally. */
export interface ChangeFilter {
  changes?: ChangeWindow;
}

/** One exportable resource; `F` is its filter (date range, session). Every call is per project. */
export interface ExportResource<F> {
  readonly name: string;
  /** Output field names, in order: the JSON keys and the CSV header. */
  readonly fields: readonly string[];
  /** Fixes what depends on the time of the request (the change window), once per request. */
  pin?(projectId: string, filter: F): Promise<F>;
  /** The change key of the row at 0-based `index` of the (pinned) order, for a page's cursor. */
  keyAt?(projectId: string, filter: F, index: number): Promise<ChangeKey | undefined>;
  count(projectId: string, filter: F): Promise<number>;
  /** One page of rows as JSON values (bounded by the page limit). */
  page(projectId: string, filter: F, offset: number, limit: number): Promise<Row[]>;
  /** The same page already encoded (CSV includes its header row; Parquet is one whole file). */
  pageEncoded(projectId: string, filter: F, offset: number, limit: number, enc: Encoding): Promise<Buffer | string>;
  /**
   * Every matching row, encoded, as successive bounded chunks read by keyset (sort key >
   * last chunk's key), up to the last key that existed when the stream began. Pulled lazily:
   * the next chunk is queried only when the consumer asks for it. Parquet chunks are joined
   * into one file (lib/parquetConcat.ts). A chunk ends at `size.rows` rows or once its rows
   * reach `size.bytes` (as the store sizes them), whichever comes first, so wide rows make short
   * chunks and the memory a stream holds is bounded in bytes, not rows.
   */
  chunks(projectId: string, filter: F, enc: Encoding, size: ChunkSize): AsyncGenerator<Buffer | string>;
}

export interface DateFilter {
  fromMs?: number;
  toMsExclusive?: number;
}

/** The bound of one keyset chunk of a stream: rows, and bytes (at least one row per chunk). */
export interface ChunkSize {
  rows: number;
  bytes: number;
}
