import type { Queryable } from '../stores/postgres/port.ts';
import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { sessionQueries } from './sessions.ts';
import { factRow, SESSION_FACTS } from './sessionFacts.ts';

/** Postgres `session_facts_backfill`: one row once the sessions that predate release health are copied. */
const DONE = 'session_facts_backfill';
const CHUNK = 20_000;

/**
 * Copies every session Postgres holds into ClickHouse session facts (its start, and its crash
 * when it is `crashed`), once: start-up, under the migration lock, after both schemas are
 * migrated (a DataMove, src/stores/index.ts). Sessions started meanwhile by another process are
 * written by ingestion too; the copies are the same facts, which the uniq states count once, so
 * a start stopped half-way (nothing marked done) simply copies again.
 */
export async function backfillSessionFacts(q: Queryable, ch: ClickHouse): Promise<number> {
  if ((await q.query(`SELECT 1 FROM ${DONE} WHERE id = 1`)).rows.length) return 0;
  let copied = 0;
  let after: { projectId: string; sessionId: string } | null = null;
  for (;;) {
    const rows = await sessionQueries.factsAfter(q, after, CHUNK);
    const last = rows[rows.length - 1];
    if (!last) break;
    await ch.insert(
      SESSION_FACTS,
      rows.flatMap((s) => (s.status === 'crashed' ? [factRow(s, false), factRow(s, true)] : [factRow(s, false)])),
    );
    copied += rows.length;
    after = { projectId: last.project_id, sessionId: last.id };
  }
  await q.query(`INSERT INTO ${DONE} (id, sessions) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`, [copied]);
  return copied;
}
