import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { ClickHouse, Params, Settings } from './port.ts';
import {
  BACKGROUND_INSERT_SETTINGS,
  INGEST_SETTINGS,
  INSERT_SETTINGS,
  QUERY_SETTINGS,
  settingsClause,
} from './port.ts';

type ChdbModule = typeof import('chdb');

/**
 * The engine's allocator (jemalloc, configured from JE_MALLOC_CONF when the library loads) keeps
 * freed pages for several seconds by default. Returned after one second, the embedded service's
 * peak RSS under the ingest bench fell by ~35 MB with no loss of throughput; returned at once it
 * fell by ~100 MB but cost a quarter of the throughput (madvise on every free; docs/bench.md).
 * An operator's own JE_MALLOC_CONF wins.
 */
const ENGINE_MALLOC_CONF = 'dirty_decay_ms:1000,muzzy_decay_ms:0';

function loadChdb(): ChdbModule {
  process.env.JE_MALLOC_CONF ??= ENGINE_MALLOC_CONF;
  try {
    return createRequire(import.meta.url)('chdb') as ChdbModule;
  } catch (err) {
    throw new Error(
      'The embedded ClickHouse engine (npm package "chdb") is not installed. ' +
        'Install it (npm install, without --omit=optional) or set CLICKHOUSE_URL to a ClickHouse server.',
      { cause: err },
    );
  }
}

/**
 * chDB in-process. One data directory per process (the engine binds it), so only the server
 * process opens it. Its `Session.queryStream` is not used: any other query on the session ends
 * an active stream, which would break exports whenever ingestion writes (measured, see README).
 */
export async function openChdb(dir: string): Promise<ClickHouse> {
  const { Session } = loadChdb();
  fs.mkdirSync(dir, { recursive: true });
  const session = new Session(dir);
  // The engine has no per-session defaults to set, so every query carries its settings in its SQL.
  const withSettings = (sql: string, settings: Settings = {}) =>
    sql + settingsClause({ ...QUERY_SETTINGS, ...settings });
  return {
    kind: 'chdb',
    async exec(sql) {
      await session.queryAsync(sql);
    },
    async insert(table, rows) {
      if (rows.length === 0) return;
      // JSONEachRow also reads a JSON array of rows; one stringify of the array is ~1.5x faster
      // than a line per row and builds no intermediate strings (measured, docs/bench.md).
      await session.insert({
        table,
        values: Buffer.from(JSON.stringify(rows)),
        format: 'JSONEachRow',
        settings: INSERT_SETTINGS,
      });
    },
    async insertBytes(table, bytes, format, opts) {
      // The buffer goes to the engine as it is (no copy, no re-encoding): chDB's raw insert.
      const settings = opts?.background ? BACKGROUND_INSERT_SETTINGS : INGEST_SETTINGS;
      await session.insert({ table, values: bytes, format, settings });
    },
    async query<T>(sql: string, params: Params = {}, settings?: Settings) {
      const res = await session.queryBindAsync(withSettings(sql, settings), params, { format: 'JSONEachRow' });
      const text = res.text();
      const out: T[] = [];
      for (const line of text.split('\n')) if (line) out.push(JSON.parse(line) as T);
      return out;
    },
    async queryRaw(sql, params, format, settings) {
      const res = await session.queryBindAsync(withSettings(sql, settings), params, { format });
      // The bytes are already JS-owned (chDB copies them off the engine): a view, not a second
      // copy of each export chunk (up to EXPORT_CHUNK_BYTES).
      const b = res.bytes();
      return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    },
    async ping() {
      await session.queryAsync('SELECT 1');
    },
    async close() {
      session.close();
    },
  };
}
