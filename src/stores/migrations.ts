import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClickHouse } from './clickhouse/port.ts';
import type { Postgres } from './postgres/port.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Migration {
  version: number;
  name: string;
  statements: string[];
}

/** Numbered SQL files (001_name.sql) in `dir`, in order, each split into statements. */
export function readMigrations(dir: string): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort()
    .map((f) => ({
      version: parseInt(f, 10),
      name: f,
      statements: fs
        .readFileSync(path.join(dir, f), 'utf8')
        .split(/;\s*(?:\n|$)/)
        .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
        .filter(Boolean),
    }));
}

export async function migratePostgres(db: Postgres, dir = path.join(root, 'postgres')): Promise<void> {
  // Several API processes may start at once against one database: every step holds the lock
  // (even CREATE TABLE IF NOT EXISTS races on the catalog without it).
  const LOCK = 'SELECT pg_advisory_xact_lock(7263540112)';
  await db.tx(async (q) => {
    await q.query(LOCK);
    await q.query('CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
  });
  for (const m of readMigrations(dir)) {
    await db.tx(async (q) => {
      await q.query(LOCK);
      const done = await q.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
      if (done.rows.length) return;
      for (const s of m.statements) await q.query(s);
      await q.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
    });
  }
}

/**
 * ClickHouse DDL is not transactional, so each statement is recorded as a step once it ran: a
 * migration stopped half-way (a crash, a kill) resumes at the statement where it stopped, and
 * the statements themselves are written to be harmless when repeated.
 */
export async function migrateClickHouse(ch: ClickHouse, dir = path.join(root, 'clickhouse')): Promise<void> {
  await ch.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String) ENGINE = ReplacingMergeTree ORDER BY version');
  await ch.exec('CREATE TABLE IF NOT EXISTS schema_migration_steps (version UInt32, step UInt32) ENGINE = ReplacingMergeTree ORDER BY (version, step)');
  const rows = await ch.query<{ version: number }>('SELECT version FROM schema_migrations FINAL');
  const applied = new Set(rows.map((r) => Number(r.version)));
  for (const m of readMigrations(dir)) {
    if (applied.has(m.version)) continue;
    const done = new Set((await ch.query<{ step: number }>(
      'SELECT step FROM schema_migration_steps FINAL WHERE version = {v:UInt32}', { v: m.version },
    )).map((r) => Number(r.step)));
    for (const [i, s] of m.statements.entries()) {
      if (done.has(i)) continue;
      await ch.exec(s);
      await ch.insert('schema_migration_steps', [{ version: m.version, step: i }]);
    }
    await ch.insert('schema_migrations', [{ version: m.version, name: m.name }]);
  }
}

/** High-volume tables, and the column their retention counts from. */
const RETAINED = [
  { table: 'events', column: 'timestamp' },
  { table: 'network_logs', column: 'timestamp' },
  { table: 'crash_occurrences', column: 'occurred_at' },
] as const;

/**
 * RETENTION_DAYS as a TTL on every high-volume table (rows older than that are dropped by
 * merges, a partition at a time when it is wholly expired); unset, the TTL is removed and rows
 * are kept. Applied at every start, so changing the setting and restarting is enough.
 */
export async function applyRetention(ch: ClickHouse, days: number | undefined): Promise<void> {
  for (const { table, column } of RETAINED) {
    const [t] = await ch.query<{ ttl: number }>(
      "SELECT position(create_table_query, ' TTL ') > 0 AS ttl FROM system.tables WHERE database = currentDatabase() AND name = {t:String}",
      { t: table },
    );
    if (days === undefined) {
      if (t?.ttl) await ch.exec(`ALTER TABLE ${table} REMOVE TTL`);
    } else {
      await ch.exec(`ALTER TABLE ${table} MODIFY TTL toDateTime(${column}) + INTERVAL ${Math.trunc(days)} DAY SETTINGS materialize_ttl_after_modify = 0`);
    }
  }
}
