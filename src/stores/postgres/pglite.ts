import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { Postgres, Queryable } from './port.ts';

/**
 * On Node 24 (V8 13) the optimizing compile of PGlite's WebAssembly takes ~500 MB for a few
 * seconds after the engine opens: opening a cluster and running 10k queries peaks at 710 MB of
 * resident memory against 217 MB with the baseline compiler (Liftoff) alone, and the queries take
 * the same time (2.1-2.2 s; Node 20 peaks at 225 MB either way; docs/bench.md). So WebAssembly in
 * this process stays on the baseline tier. A V8 without these flags says so on stderr and goes on.
 */
function baselineWasmOnly(): void {
  v8.setFlagsFromString('--no-wasm-dynamic-tiering');
  v8.setFlagsFromString('--no-wasm-tier-up');
}

/**
 * PGlite: real Postgres in WASM, single connection. Its own mutex serialises queries and
 * transactions, so a query never runs inside another caller's transaction.
 */
export async function openPglite(dir: string): Promise<Postgres> {
  fs.mkdirSync(dir, { recursive: true });
  // initdb grows the engine's WebAssembly memory to ~850 MB, and WebAssembly memory never
  // shrinks: done in this process, it would stay this process's peak for good. A fresh directory
  // is therefore initialised by a short-lived process of its own; opened afterwards, the cluster
  // runs in ~300 MB (measured, docs/bench.md).
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    await promisify(execFile)(process.execPath, [fileURLToPath(new URL('./pgliteInitdb.mjs', import.meta.url)), dir]);
  }
  baselineWasmOnly();
  const db = await PGlite.create(dir, {
    parsers: { 20: (v: string) => Number(v) },
    // The embedded store holds projects, keys, sessions and crash groups of one small install;
    // Postgres's default 128 MB of shared buffers would be ~90 MB of resident memory for nothing.
    postgresqlconf: ['shared_buffers=16MB'],
    // the crash list's search index (postgres/018): loaded only when a migration creates the extension
    extensions: { pg_trgm },
  });
  const wrap = (q: Pick<PGlite, 'query'>): Queryable => ({
    async query<T>(sql: string, params: readonly unknown[] = []) {
      const r = await q.query<T>(sql, params as unknown[]);
      return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
    },
  });
  const base = wrap(db);
  return {
    kind: 'pglite',
    query: base.query,
    tx: (fn) => db.transaction((t) => fn(wrap(t))),
    close: () => db.close(),
  };
}
