export type Row = Record<string, unknown>;

/** The encodings besides the JSON envelope: CSV (with a header row) and NDJSON. */
export type Encoding = 'csv' | 'ndjson';

/** One exportable resource; `F` is its filter (date range, session). Every call is per project. */
export interface ExportResource<F> {
  readonly name: string;
  /** Output field names, in order: the JSON keys and the CSV header. */
  readonly fields: readonly string[];
  count(projectId: string, filter: F): Promise<number>;
  /** One page of rows as JSON values (bounded by the page limit). */
  page(projectId: string, filter: F, offset: number, limit: number): Promise<Row[]>;
  /** The same page already encoded (CSV includes its header row). */
  pageEncoded(projectId: string, filter: F, offset: number, limit: number, enc: Encoding): Promise<Buffer | string>;
  /**
   * Every matching row, encoded, as successive bounded chunks read by keyset (sort key >
   * last chunk's key), up to the last key that existed when the stream began. Pulled lazily:
   * the next chunk is queried only when the consumer asks for it.
   */
  chunks(projectId: string, filter: F, enc: Encoding, chunkRows: number): AsyncGenerator<Buffer | string>;
}

export interface DateFilter {
  fromMs?: number;
  toMsExclusive?: number;
}
