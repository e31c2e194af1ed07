/**
 * The one ClickHouse surface the project uses, with two adapters: the embedded engine (chDB)
 * and a server over HTTP (@clickhouse/client). Both take the same SQL with `{name:Type}`
 * parameters; DateTime values come out as ISO 8601 with milliseconds.
 */
export type Params = Record<string, unknown>;

/** Query-level settings; each adapter applies them the way its engine takes them. */
export type Settings = Readonly<Record<string, string | number>>;

export interface ClickHouse {
  readonly kind: 'chdb' | 'http';
  /** Runs a statement that returns nothing (DDL). */
  exec(sql: string): Promise<void>;
  /** Inserts rows as JSONEachRow; resolves once the insert has committed. */
  insert(table: string, rows: readonly object[]): Promise<void>;
  /** Runs a query and returns its rows (JSONEachRow). Only for bounded results. */
  query<T = Record<string, unknown>>(sql: string, params?: Params, settings?: Settings): Promise<T[]>;
  /** Runs a query and returns its whole output in `format` (e.g. CSVWithNames). Bounded results only. */
  queryRaw(sql: string, params: Params, format: string, settings?: Settings): Promise<Buffer>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Settings both adapters apply to every query, so output is the same whatever the engine. */
export const QUERY_SETTINGS = {
  date_time_output_format: 'iso',
  output_format_json_quote_64bit_integers: 0,
  format_csv_null_representation: '',
} as const;

/**
 * Settings of every insert, in both adapters.
 * - `optimize_on_insert = 0`: do not collapse duplicate keys inside each inserted block. Reads
 *   already deduplicate with FINAL (docs/decisions.md), so collapsing at insert is redundant work, and
 *   skipping it doubles the embedded engine's insert rate (measured, docs/bench.md).
 * - `input_format_json_read_objects_as_strings = 1`: a JSON object sent for a String column is
 *   stored as its JSON text, byte for byte (events' `data`), so rows carry objects, not JSON
 *   strings escaped inside JSON. Explicit because the engine's default has changed over versions.
 */
export const INSERT_SETTINGS = { optimize_on_insert: 0, input_format_json_read_objects_as_strings: 1 } as const;

/** A `SETTINGS` clause, for an engine that takes query settings only inside the SQL (chDB). */
export function settingsClause(s: Settings): string {
  return ' SETTINGS ' + Object.entries(s).map(([k, v]) => `${k}=${typeof v === 'string' ? `'${v.replaceAll("'", "\\'")}'` : v}`).join(', ');
}
