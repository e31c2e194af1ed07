import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { Postgres, Queryable } from './port.ts';

/**
 * PGlite: real Postgres in WASM, single connection. Its own mutex serialises queries and
 * transactions, so a query never runs inside another caller's transaction.
 */
export async function openPglite(dir: string): Promise<Postgres> {
  fs.mkdirSync(dir, { recursive: true });
  const open = () => PGlite.create(dir, { parsers: { 20: (v: string) => Number(v) } });
  // initdb grows the engine's WebAssembly memory to ~800 MB, and WebAssembly memory never
  // shrinks; reopened, the same cluster runs in ~400 MB less (measured, docs/bench.md). A fresh
  // directory is therefore initialised, closed and opened again (0.3 s, once per directory).
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) await (await open()).close();
  const db = await open();
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
