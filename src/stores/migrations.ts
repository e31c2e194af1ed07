import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { ClickHouse } from './clickhouse/port.ts';
import type { Postgres, Queryable } from './postgres/port.ts';
import { clusterBookkeeping, clusterStatements, localName, singleNodeHistory } from './clickhouse/cluster.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Migration {
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

/** The advisory locks a starting process migrates under: Postgres's schema, ClickHouse's. */
export const MIGRATION_LOCKS = { postgres: 7263540112, clickhouse: 7263540113 } as const;

/** How long a starting process waits for another's migrations before it gives up. */
const MIGRATION_LOCK_WAIT_MS = 10 * 60_000;

/**
 * Takes a transaction-scoped advisory lock, waiting as long as another process's migrations
 * take (up to `waitMs`). Asked again and again rather than waited on in one statement: the
 * server connection's query timeout (src/stores/postgres/pg.ts, 10 s) would end a single wait,
 * and the process's start with it, while another process migrates a large table or a cluster.
 */
export async function migrationLock(q: Queryable, key: number, waitMs = MIGRATION_LOCK_WAIT_MS): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const r = await q.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1::bigint) AS ok', [key]);
    if (r.rows[0]?.ok) return;
    if (Date.now() >= deadline)
      throw new Error(`another process has held migration lock ${key} for ${Math.round(waitMs / 1000)} s`);
    await sleep(100);
  }
}

export async function migratePostgres(db: Postgres, dir = path.join(root, 'postgres')): Promise<void> {
  // Several API processes may start at once against one database: every step holds the lock
  // (even CREATE TABLE IF NOT EXISTS races on the catalog without it).
  const lock = (q: Queryable) => migrationLock(q, MIGRATION_LOCKS.postgres);
  await db.tx(async (q) => {
    await lock(q);
    await q.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
  });
  for (const m of readMigrations(dir)) {
    await db.tx(async (q) => {
      await lock(q);
      const done = await q.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
      if (done.rows.length) return;
      for (const s of m.statements) await q.query(s);
      await q.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
    });
  }
}

/**
 * The statements each migration step runs: the file's statement as written, or on a cluster
 * its cluster form (src/stores/clickhouse/cluster.ts), which may be several statements or none.
 * The whole history is transformed in order, so a step knows the tables created before it.
 */
export function clickHouseSteps(
  migrations: Migration[],
  cluster?: string,
): { version: number; name: string; steps: string[][] }[] {
  const known = new Set<string>();
  return migrations.map((m) => ({
    version: m.version,
    name: m.name,
    steps: m.statements.map((s) => {
      if (cluster === undefined) return [s];
      return singleNodeHistory(m.version, s) ? [] : clusterStatements(s, cluster, known);
    }),
  }));
}

/**
 * ClickHouse DDL is not transactional, so each statement is recorded as a step once it ran: a
 * migration stopped half-way (a crash, a kill) resumes at the statement where it stopped, and
 * the statements themselves are written to be harmless when repeated. On a cluster the
 * bookkeeping is replicated to every node; should a node lag behind, it repeats steps, which
 * are all idempotent there (CREATE … IF NOT EXISTS, DROP … IF EXISTS, MODIFY TTL).
 */
export async function migrateClickHouse(
  ch: ClickHouse,
  dir = path.join(root, 'clickhouse'),
  cluster?: string,
): Promise<void> {
  if (cluster === undefined) {
    await ch.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String) ENGINE = ReplacingMergeTree ORDER BY version',
    );
    await ch.exec(
      'CREATE TABLE IF NOT EXISTS schema_migration_steps (version UInt32, step UInt32) ENGINE = ReplacingMergeTree ORDER BY (version, step)',
    );
  } else {
    for (const s of clusterBookkeeping(cluster)) await ch.exec(s);
  }
  const rows = await ch.query<{ version: number }>('SELECT version FROM schema_migrations FINAL');
  const applied = new Set(rows.map((r) => Number(r.version)));
  for (const m of clickHouseSteps(readMigrations(dir), cluster)) {
    if (applied.has(m.version)) continue;
    const done = new Set(
      (
        await ch.query<{ step: number }>('SELECT step FROM schema_migration_steps FINAL WHERE version = {v:UInt32}', {
          v: m.version,
        })
      ).map((r) => Number(r.step)),
    );
    for (const [i, statements] of m.steps.entries()) {
      if (done.has(i)) continue;
      for (const s of statements) await ch.exec(s);
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
  // the crash page's state forgets the days its occurrences no longer hold
  { table: 'crash_group_state', column: 'day' },
] as const;

/**
 * RETENTION_DAYS as a TTL on every high-volume table (rows older than that are dropped by
 * merges, a partition at a time when it is wholly expired); unset, the TTL is removed and rows
 * are kept. Applied at every start, so changing the setting and restarting is enough.
 */
export async function applyRetention(ch: ClickHouse, days: number | undefined, cluster?: string): Promise<void> {
  for (const { table, column } of RETAINED) {
    const stored = cluster === undefined ? table : localName(table);
    const [t] = await ch.query<{ ttl: number }>(
      "SELECT position(create_table_query, ' TTL ') > 0 AS ttl FROM system.tables WHERE database = currentDatabase() AND name = {t:String}",
      { t: stored },
    );
    if (days === undefined && !t?.ttl) continue;
    await ch.exec(retentionStatement(table, column, days, cluster));
  }
}

/** The TTL statement of one table; on a cluster it is the local tables' (a Distributed table stores nothing). */
export function retentionStatement(table: string, column: string, days: number | undefined, cluster?: string): string {
  const target = cluster === undefined ? table : `${localName(table)} ON CLUSTER '${cluster}'`;
  return days === undefined
    ? `ALTER TABLE ${target} REMOVE TTL`
    : `ALTER TABLE ${target} MODIFY TTL toDateTime(${column}) + INTERVAL ${Math.trunc(days)} DAY SETTINGS materialize_ttl_after_modify = 0`;
}
