import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPg, QUERY_TIMEOUT_MS } from '../../src/stores/postgres/pg.ts';
import type { Postgres } from '../../src/stores/postgres/port.ts';
import { migrationLock } from '../../src/stores/migrations.ts';

// A CI run on a busy machine: three processes started at once on one database; while one ran
// ClickHouse's migrations the others' wait on the lock hit the connection's 10 s query timeout,
// and they exited. Another process holds the lock here (its own connection); needs a Postgres
// server (DATABASE_URL), as the embedded one has a single connection.
const url = process.env.DATABASE_URL;
const KEY = 7263549999; // a lock of this test's own, not the service's

let db: Postgres;
let other: pg.Client;
beforeAll(async () => {
  if (!url) return;
  db = await openPg(url);
  other = new pg.Client({ connectionString: url });
  await other.connect();
});
afterAll(async () => {
  await other?.end();
  await db?.close();
});

describe.skipIf(!url)('the migration lock, held by another process', () => {
  it('is waited for past the query timeout, until it is released', async () => {
    await other.query('SELECT pg_advisory_lock($1::bigint)', [KEY]);
    const holdMs = QUERY_TIMEOUT_MS + 1000;
    const t0 = Date.now();
    setTimeout(() => void other.query('SELECT pg_advisory_unlock($1::bigint)', [KEY]), holdMs);
    const held = await db.tx(async (q) => {
      await migrationLock(q, KEY);
      // held by this transaction now: another session cannot take it
      return (await other.query('SELECT pg_try_advisory_lock($1::bigint) AS ok', [KEY])).rows[0].ok;
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(holdMs - 100);
    expect(held).toBe(false);
    // released with the transaction
    expect((await other.query('SELECT pg_try_advisory_lock($1::bigint) AS ok', [KEY])).rows[0].ok).toBe(true);
    await other.query('SELECT pg_advisory_unlock($1::bigint)', [KEY]);
  }, 30_000);

  it('gives up past its wait, naming the lock', async () => {
    await other.query('SELECT pg_advisory_lock($1::bigint)', [KEY]);
    try {
      await expect(db.tx((q) => migrationLock(q, KEY, 300))).rejects.toThrow(`migration lock ${KEY}`);
    } finally {
      await other.query('SELECT pg_advisory_unlock($1::bigint)', [KEY]);
    }
  });
});
