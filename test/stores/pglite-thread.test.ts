import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/stores/postgres/pglite.ts';
import type { Postgres } from '../../src/stores/postgres/port.ts';
import { classify } from '../../src/pipeline/errors.ts';
import { tempDataDir } from '../helpers/server.ts';

// The embedded Postgres runs on a thread of its own (src/stores/postgres/pglite.ts): what the
// callers relied on when it ran on theirs must hold across the thread.
describe('embedded Postgres on its own thread', () => {
  let db: Postgres;
  let dir: string;
  beforeAll(async () => {
    dir = tempDataDir();
    db = await openPglite(path.join(dir, 'postgres'));
    await db.query('CREATE TABLE t (id int PRIMARY KEY, at timestamptz, big bigint, tags text[], body bytea)');
  });
  afterAll(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('values cross both ways as the driver types them: dates, bigint as number, arrays, bytes', async () => {
    const at = new Date('2026-11-27T12:00:00.000Z');
    await db.query('INSERT INTO t VALUES ($1, $2, $3, $4, $5)', [1, at, 2 ** 40, ['a', 'b'], Buffer.from('hi')]);
    const r = await db.query<{ at: Date; big: number; tags: string[]; body: Uint8Array }>(
      'SELECT at, big, tags, body FROM t WHERE id = 1',
    );
    expect(r.rows[0]?.at).toEqual(at);
    expect(r.rows[0]?.big).toBe(2 ** 40);
    expect(r.rows[0]?.tags).toEqual(['a', 'b']);
    expect(Buffer.from(r.rows[0]?.body ?? []).toString()).toBe('hi');
  });

  it("an error keeps Postgres's fields, so the pipelines classify it as before", async () => {
    const err = await db.query('INSERT INTO t (id) VALUES (1)').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ code: '23505', constraint: 't_pkey' });
    expect(classify(err)).toEqual({ kind: 'permanent', reason: 'postgres-refused' });
  });

  it('a transaction is all or nothing, and no other caller runs inside it', async () => {
    const failed = db
      .tx(async (q) => {
        await q.query('INSERT INTO t (id) VALUES (10)');
        await new Promise((r) => setTimeout(r, 50));
        throw new Error('changed my mind');
      })
      .catch((e: Error) => e.message);
    // asked while the transaction is open: it must neither see its row nor be rolled back with it
    const outside = db.query('INSERT INTO t (id) VALUES (11) RETURNING id');
    const seen = db.query<{ n: number }>('SELECT count(*)::int AS n FROM t WHERE id = 10');
    expect(await failed).toBe('changed my mind');
    expect((await outside).rows).toEqual([{ id: 11 }]);
    expect((await seen).rows[0]?.n).toBe(0);

    const kept = await db.tx(async (q) => {
      await q.query('INSERT INTO t (id) VALUES (12)');
      return (await q.query<{ id: number }>('SELECT id FROM t WHERE id = 12')).rows;
    });
    expect(kept).toEqual([{ id: 12 }]);
    const ids = await db.query<{ id: number }>('SELECT id FROM t WHERE id >= 10 ORDER BY id');
    expect(ids.rows.map((r) => r.id)).toEqual([11, 12]);
  });

  it('a statement error inside a transaction rolls the whole transaction back', async () => {
    const err = await db
      .tx(async (q) => {
        await q.query('INSERT INTO t (id) VALUES (20)');
        await q.query('INSERT INTO t (id) VALUES (20)');
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: '23505' });
    const r = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM t WHERE id = 20');
    expect(r.rows[0]?.n).toBe(0);
  });
});
