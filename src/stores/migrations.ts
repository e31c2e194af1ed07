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

export async function migrateClickHouse(ch: ClickHouse, dir = path.join(root, 'clickhouse')): Promise<void> {
  await ch.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String) ENGINE = ReplacingMergeTree ORDER BY version');
  const rows = await ch.query<{ version: number }>('SELECT version FROM schema_migrations FINAL');
  const applied = new Set(rows.map((r) => Number(r.version)));
  for (const m of readMigrations(dir)) {
    if (applied.has(m.version)) continue;
    // ClickHouse DDL is not transactional: every statement is written to be idempotent.
    for (const s of m.statements) await ch.exec(s);
    await ch.insert('schema_migrations', [{ version: m.version, name: m.name }]);
  }
}
