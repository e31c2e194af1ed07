import pg from 'pg';
import type { Postgres, Queryable } from './port.ts';

// int8 columns hold Unix-ms timestamps and counts, all far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export const QUERY_TIMEOUT_MS = 10_000;

export async function openPg(url: string): Promise<Postgres> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5000,
    // A partition (packets dropped, nothing reset) would otherwise hold a request, and its pool
    // client, forever: fail the query instead, so the caller answers a retryable 5xx.
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
  });
  // A client losing its connection, idle or checked out between two queries of a transaction,
  // must not crash the process: the query in flight fails, and release(err) discards the client.
  pool.on('error', () => {});
  pool.on('connect', (c) => c.on('error', () => {}));
  const wrap = (c: pg.Pool | pg.PoolClient): Queryable => ({
    async query<T>(sql: string, params: readonly unknown[] = []) {
      const r = await c.query(sql, params as unknown[]);
      return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
    },
  });
  const base = wrap(pool);
  return {
    kind: 'pg',
    query: base.query,
    async tx(fn) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const out = await fn(wrap(client));
        await client.query('COMMIT');
        return out;
      } catch (err) {
        // A failed ROLLBACK means the connection is gone or stuck: do not return it to the pool.
        await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        throw err;
      } finally {
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}
