import type { ClickHouse, Params, Settings } from '../../stores/clickhouse/port.ts';
import { formulaPatternRe2 } from '../../domain/csv.ts';
import { CSV_CLICKHOUSE_SETTINGS } from '../../lib/clickhouseCsv.ts';
import { concatParquet } from '../../lib/parquetConcat.ts';
import type { ChunkSize, Encoding, ExportResource, Row } from './types.ts';

/** Settings of every export read, on top of the adapters' own QUERY_SETTINGS. */
const SETTINGS: Settings = {
  ...CSV_CLICKHOUSE_SETTINGS,
  output_format_json_escape_forward_slashes: 0,
  // Output aliases reuse column names (`… AS url`); WHERE must still see the stored column.
  prefer_column_name_to_alias: 1,
  // Parquet text columns as STRING (UTF-8), not bare binary, so readers show them as text;
  // zstd, which every warehouse reader takes, spelled out because engine defaults move.
  output_format_parquet_string_as_string: 1,
  output_format_parquet_compression_method: 'zstd',
};

const formulaRegex = formulaPatternRe2();
const formulaLiteral = `'${formulaRegex.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/** SQL for csv.ts's neutraliseFormula on a text column (NULL stays NULL). */
export function neutralised(col: string): string {
  return `if(match(${col}, ${formulaLiteral}), concat('''', ${col}), ${col})`;
}

/** The three SELECT lists of a ClickHouse-backed resource; each aliases to the output field names. */
export interface ChSelects {
  /** JSONEachRow rows for the JSON envelope. */
  json: string;
  /** CSV: text columns passed through `neutralised`. */
  csv: string;
  /** NDJSON: either the JSON list (JSONEachRow) or one pre-built JSON line (TabSeparatedRaw). */
  ndjson: { select: string; format: 'JSONEachRow' | 'TabSeparatedRaw' };
  /** Parquet: typed columns (timestamps stay DateTime64(3, 'UTC'), UUIDs become text). */
  parquet: string;
}

/** How a resource's sort key is read and compared, for keyset chunks. */
export interface ChKeyset<K> {
  /** SELECT list yielding the key, e.g. `toUnixTimestamp64Milli(timestamp) AS t, id`. */
  keySelect: string;
  order: string;
  /** `order` over the names `keySelect` gives, for a query that reads only the keys. */
  keyOrder: string;
  orderDesc: string;
  /** Condition "sort key > key", with parameters named by `prefix`. */
  after(prefix: string): string;
  /** Condition "sort key <= key". */
  atMost(prefix: string): string;
  params(key: K, prefix: string): Params;
}

export interface ChSource<K> {
  table: string;
  /** Filter of the resource (project and user filters), with its parameters. */
  where: string;
  params: Params;
  selects: ChSelects;
  keyset: ChKeyset<K>;
  /**
   * A row's size in bytes for bounding chunks, as SQL (default `byteSize(*)`, which reads and
   * measures every column: as dear as reading the chunk). A table with a few wide text columns
   * gives their `length()` plus a constant, which reads only those columns' sizes.
   */
  rowBytes?: string;
  /** Settings of every query of this source on top of the export's (NARROW_READ_SETTINGS for one session's rows). */
  settings?: Settings;
}

const settingsOf = (src: ChSource<unknown>): Settings => (src.settings ? { ...SETTINGS, ...src.settings } : SETTINGS);

function formatOf(s: ChSelects, enc: Encoding, header: boolean): { select: string; format: string } {
  if (enc === 'csv') return { select: s.csv, format: header ? 'CSVWithNames' : 'CSV' };
  if (enc === 'parquet') return { select: s.parquet, format: 'Parquet' };
  return s.ndjson;
}

export async function chCount(ch: ClickHouse, src: ChSource<unknown>): Promise<number> {
  const r = await ch.query<{ n: number }>(
    `SELECT count() AS n FROM ${src.table} FINAL WHERE ${src.where}`,
    src.params,
    settingsOf(src),
  );
  return Number(r[0]?.n ?? 0);
}

export function chPage<R>(ch: ClickHouse, src: ChSource<unknown>, offset: number, limit: number): Promise<R[]> {
  return ch.query<R>(
    `SELECT ${src.selects.json} FROM ${src.table} FINAL WHERE ${src.where} ORDER BY ${src.keyset.order}
     LIMIT {limit:UInt64} OFFSET {offset:UInt64}`,
    { ...src.params, limit, offset },
    settingsOf(src),
  );
}

export function chPageEncoded(
  ch: ClickHouse,
  src: ChSource<unknown>,
  offset: number,
  limit: number,
  enc: Encoding,
): Promise<Buffer> {
  const f = formatOf(src.selects, enc, true);
  return ch.queryRaw(
    `SELECT ${f.select} FROM ${src.table} FINAL WHERE ${src.where} ORDER BY ${src.keyset.order}
     LIMIT {limit:UInt64} OFFSET {offset:UInt64}`,
    { ...src.params, limit, offset },
    f.format,
    settingsOf(src),
  );
}

/** Chunks one boundary scan plans ahead (see chChunks). */
const CHUNKS_PER_SCAN = 4;
/** Rows of the first chunk at most: the first byte waits for this many rows, not a whole chunk. */
const FIRST_CHUNK_ROWS = 4096;

interface ChunkEnd<K> {
  key: K;
  /** 1-based row number in the scan, the running size up to and including the row, the row's size. */
  n: number;
  bytes: number;
  b: number;
}

/**
 * The chunk ends a scan allows, as few as possible: from each end, the furthest candidate whose
 * chunk has at most `size.rows` rows and, before its last row, less than `size.bytes`. The
 * candidates (every multiple of `size.rows` rows, every row whose size crosses a multiple of
 * `size.bytes`, and the scan's last row) make the next candidate after any candidate fit.
 */
export function pickChunkEnds<K>(cands: readonly ChunkEnd<K>[], size: ChunkSize): ChunkEnd<K>[] {
  const out: ChunkEnd<K>[] = [];
  let from = { n: 0, bytes: 0 };
  for (let i = 0; i < cands.length; i++) {
    const c = cands[i] as ChunkEnd<K>;
    const next = cands[i + 1];
    if (next !== undefined && next.n - from.n <= size.rows && next.bytes - next.b - from.bytes < size.bytes) continue;
    out.push(c);
    from = c;
  }
  return out;
}

/**
 * Keyset chunks in ClickHouse's own output format. The stream's end is the greatest key at
 * its start, so rows appended meanwhile do not keep it running. Chunk ends are planned ahead,
 * several per query: one scan of the keys after the previous end, with each row's size
 * (`rowBytes`), returns the candidate ends (`pickChunkEnds`), so a chunk holds at most
 * `size.rows` rows and less than `size.bytes` before its last row. Each chunk then reads every
 * row in (previous end, its end] with FINAL: a row inserted into that range in between is read
 * once, and a chunk never has to be parsed to learn where it stopped. A chunk is one buffer, so
 * its bytes bound the stream's memory.
 *
 * Every query has a fixed cost in the engine (~7 ms of CPU for a one-row read of this table on
 * the bench machine, docs/bench.md): one boundary query per chunk cost as much as reading the
 * chunk. A scan covers about CHUNKS_PER_SCAN chunks by the sizes seen so far, so wide rows are
 * not scanned `size.rows` at a time; the first scan covers FIRST_CHUNK_ROWS rows (the time to
 * the first byte).
 */
export async function* chChunks<K>(
  ch: ClickHouse,
  src: ChSource<K>,
  enc: Encoding,
  size: ChunkSize,
): AsyncGenerator<Buffer> {
  const ks = src.keyset;
  const settings = settingsOf(src);
  const rowBytes = src.rowBytes ?? 'byteSize(*)';
  const scan = async (cond: string, params: Params, scanRows: number): Promise<ChunkEnd<K>[]> => {
    const rows = await ch.query<K & { __n: number; __bytes: number; __b: number }>(
      `SELECT * FROM (
         SELECT *, sum(__b) OVER w AS __bytes, row_number() OVER w AS __n FROM (
           SELECT ${ks.keySelect}, ${rowBytes} AS __b
           FROM ${src.table} WHERE ${src.where} AND ${cond}
           ORDER BY ${ks.order} LIMIT {scanRows:UInt64}
         )
         WINDOW w AS (ORDER BY ${ks.keyOrder} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
       ) WHERE __n % {chunkRows:UInt64} = 0 OR __n = {scanRows:UInt64}
            OR intDiv(__bytes, {chunkBytes:UInt64}) > intDiv(__bytes - __b, {chunkBytes:UInt64})
       ORDER BY __n LIMIT {candidates:UInt64}`,
      {
        ...src.params,
        ...params,
        scanRows,
        chunkRows: size.rows,
        chunkBytes: size.bytes,
        candidates: 4 * CHUNKS_PER_SCAN,
      },
      settings,
    );
    const cands = rows.map(({ __n, __bytes, __b, ...key }) => ({
      key: key as unknown as K,
      n: Number(__n),
      bytes: Number(__bytes),
      b: Number(__b),
    }));
    return pickChunkEnds(cands, size);
  };
  const keyQuery = (cond: string, order: string, params: Params, offset: number) =>
    ch.query<K>(
      `SELECT ${ks.keySelect} FROM ${src.table} WHERE ${src.where} AND ${cond} ORDER BY ${order} LIMIT 1 OFFSET {skip:UInt64}`,
      { ...src.params, ...params, skip: offset },
      settings,
    );
  const end = (await keyQuery('1', ks.orderDesc, {}, 0))[0];
  if (end === undefined) {
    // A CSV keeps its header row and a Parquet stream its schema (one empty file).
    if (enc === 'csv' || enc === 'parquet') {
      const f = formatOf(src.selects, enc, true);
      yield await ch.queryRaw(
        `SELECT ${f.select} FROM ${src.table} WHERE ${src.where} LIMIT 0`,
        src.params,
        f.format,
        settings,
      );
    }
    return;
  }
  const endParams = ks.params(end, 'e');
  let scanRows = Math.min(size.rows, FIRST_CHUNK_ROWS);
  let ahead: K[] = [];
  let last: K | undefined;
  let headerDone = false;
  for (;;) {
    const lower = last === undefined ? '1' : ks.after('a');
    const lowerParams = last === undefined ? {} : ks.params(last, 'a');
    if (ahead.length === 0) {
      const ends = await scan(`${lower} AND ${ks.atMost('e')}`, { ...lowerParams, ...endParams }, scanRows);
      ahead = ends.map((e) => e.key);
      const tail = ends[ends.length - 1];
      if (tail !== undefined) {
        // Rows a chunk can hold at the sizes seen, for CHUNKS_PER_SCAN chunks and half again.
        const perChunk = Math.min(size.rows, (size.bytes * tail.n) / Math.max(tail.bytes, 1));
        scanRows = Math.max(1, Math.min(size.rows * CHUNKS_PER_SCAN, Math.ceil(1.5 * CHUNKS_PER_SCAN * perChunk)));
      }
    }
    const found = ahead.shift();
    const upto = found ?? end;
    const f = formatOf(src.selects, enc, !headerDone);
    const out = await ch.queryRaw(
      `SELECT ${f.select} FROM ${src.table} FINAL WHERE ${src.where} AND ${lower} AND ${ks.atMost('b')} ORDER BY ${ks.order}`,
      { ...src.params, ...lowerParams, ...ks.params(upto, 'b') },
      f.format,
      settings,
    );
    if (out.length > 0) {
      headerDone = true;
      yield out;
    }
    if (found === undefined) return;
    last = upto;
  }
}

/** An export resource read from ClickHouse: every operation runs on the one source it builds. */
export function chResource<F, K>(
  ch: ClickHouse,
  name: string,
  fields: readonly string[],
  source: (projectId: string, filter: F) => ChSource<K>,
  toRow: (r: Row) => Row = (r) => r,
): ExportResource<F> {
  return {
    name,
    fields,
    count: (p, f) => chCount(ch, source(p, f)),
    page: async (p, f, offset, limit) => (await chPage<Row>(ch, source(p, f), offset, limit)).map(toRow),
    pageEncoded: (p, f, offset, limit, enc) => chPageEncoded(ch, source(p, f), offset, limit, enc),
    // Each chunk comes out of ClickHouse as a whole Parquet file; they are joined into one.
    chunks: (p, f, enc, n) =>
      enc === 'parquet' ? concatParquet(chChunks(ch, source(p, f), enc, n)) : chChunks(ch, source(p, f), enc, n),
  };
}
