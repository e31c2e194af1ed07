import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import type { Postgres, Queryable } from './port.ts';

/**
 * PGlite: real Postgres in WASM, single connection. Its own mutex serialises queries and
 * transactions, so a query never runs inside another caller's transaction.
 */
export async function openPglite(dir: string): Promise<Postgres> {
  fs.mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir, { parsers: { 20: (v: string) => Number(v) } });
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
