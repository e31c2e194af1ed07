/**
 * The one ClickHouse surface the project uses, with two adapters: the embedded engine (chDB)
 * and a server over HTTP (@clickhouse/client). Both take the same SQL with `{name:Type}`
 * parameters; DateTime values come out as ISO 8601 with milliseconds.
 */
export type Params = Record<string, unknown>;

/** Query-level settings; each adapter applies them the way its engine takes them. */
export type Settings = Readonly<Record<string, string | number>>;

/**
 * `background`: a spool loader's insert while it keeps up; its rows were acknowledged already and
 * no request waits on it. The embedded engine runs it below the request thread's priority
 * (BACKGROUND_INSERT_SETTINGS); a server runs it as any other insert.
 */
export interface InsertOptions {
  background?: boolean;
}

export interface ClickHouse {
  readonly kind: 'chdb' | 'http';
  /** Runs a statement that returns nothing (DDL). */
  exec(sql: string): Promise<void>;
  /** Inserts rows as JSONEachRow; resolves once the insert has committed. */
  insert(table: string, rows: readonly object[]): Promise<void>;
  /**
   * Inserts bytes already in `format` (the ingest path's JSON lines), with the ingest settings;
   * resolves once the insert (and the materialized views it feeds) has committed.
   */
  insertBytes(table: string, bytes: Buffer, format: 'JSONEachRow', opts?: InsertOptions): Promise<void>;
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
  // JSON text built in SQL (the events' `data`) reads as JavaScript writes it: "/a", not "\/a".
  output_format_json_escape_forward_slashes: 0,
} as const;

/**
 * Settings of a read its sort key narrows to a few granules (one session's events): one thread.
 * Left to the engine, even a read of a hundred rows with FINAL is split across threads whose
 * streams are then merged. Over 400 parts holding one session's rows (bench/narrowReads.ts), on
 * one thread its count took 41-48 ms of CPU against 98-113, its first page 63-76 against 119-149,
 * and less wall time too (docs/bench.md, "Second session of 2026-12-07"). A read of a project's
 * rows over a time range keeps the engine's threads.
 */
export const NARROW_READ_SETTINGS = { max_threads: 1 } as const;

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

/**
 * Settings of the ingest path's inserts (request bodies as JSON lines into the `*_ingest` Null
 * tables), on top of INSERT_SETTINGS, spelled out because engine defaults move between versions:
 * a body's objects read as named tuples, its unknown keys skipped, its missing ones defaulted.
 * A batch may span many months of device clocks: the partition cap must not fail it.
 * Parallel parsing is off: it splits input into 10 MiB chunks, and the spool's loads are 2 MiB,
 * so it parsed each insert in one chunk on two more threads (handed over twice) for nothing. Off,
 * the loader drained the paths bench's backlog 11-21 % sooner at the same acked rates (docs/bench.md).
 */
export const INGEST_SETTINGS = {
  ...INSERT_SETTINGS,
  input_format_skip_unknown_fields: 1,
  input_format_json_named_tuples_as_objects: 1,
  input_format_json_ignore_unknown_keys_in_named_tuple: 1,
  input_format_json_defaults_for_missing_elements_in_named_tuple: 1,
  input_format_null_as_default: 1,
  throw_on_max_partitions_per_insert_block: 0,
  input_format_parallel_parsing: 0,
} as const;

/**
 * The embedded engine's background inserts: every thread that runs one (the libuv thread that
 * calls the engine, its pipeline threads) at nice 3 for the insert's duration, back to 0 after
 * (ClickHouse's `os_thread_priority`; a positive value needs no privilege). The engine shares the
 * cores with the request thread, and an insert of a 2 MiB load holds one for 60-100 ms in a quiet
 * second (docs/bench.md, 2026-12-06): a request waiting behind it made the half-load tail. At
 * nice 3 the insert still gets a third of a contended core and all of an idle one. Merges keep
 * their priority: starved, they were only merged later, under the next load (docs/bench.md,
 * "Sixth session of 2026-12-07").
 */
export const BACKGROUND_INSERT_SETTINGS = { ...INGEST_SETTINGS, os_thread_priority: 3 } as const;

/** With CLICKHOUSE_ASYNC_INSERT: the server buffers, and answers once the buffer is written. */
export const ASYNC_INSERT_SETTINGS = { async_insert: 1, wait_for_async_insert: 1 } as const;

/** A `SETTINGS` clause, for an engine that takes query settings only inside the SQL (chDB). */
export function settingsClause(s: Settings): string {
  return (
    ' SETTINGS ' +
    Object.entries(s)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? `'${v.replaceAll("'", "\\'")}'` : v}`)
      .join(', ')
  );
}
