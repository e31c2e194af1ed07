import type { Queryable } from '../../stores/postgres/port.ts';
import { GROUPS } from './rows.ts';

/** An occurrence a batch counts: its group, its class (0 crash levels, 1 message levels), its user. */
export interface CountedOccurrence {
  projectId: string;
  id: string;
  groupId: string;
  cls: 0 | 1;
  fatal: boolean;
  at: number;
  /** '' when the occurrence names no user */
  user: string;
}

/** A group's counters, as `countOccurrences` keeps them. */
export interface GroupCounters {
  crashOccurrences: number;
  fatalOccurrences: number;
  messageOccurrences: number;
  crashUsers: number;
  messageUsers: number;
  crashLastSeenAt: number | null;
  messageLastSeenAt: number | null;
}

/**
 * The counters a group made for these occurrences starts with: each occurrence id once, each
 * user once per class; what `countOccurrences` would add to a group with none.
 */
export function countersOf(os: readonly Omit<CountedOccurrence, 'projectId' | 'groupId'>[]): GroupCounters {
  const c: GroupCounters = {
    crashOccurrences: 0,
    fatalOccurrences: 0,
    messageOccurrences: 0,
    crashUsers: 0,
    messageUsers: 0,
    crashLastSeenAt: null,
    messageLastSeenAt: null,
  };
  const ids = new Set<string>();
  const users = [new Set<string>(), new Set<string>()];
  for (const o of os) {
    if (ids.has(o.id)) continue;
    ids.add(o.id);
    if (o.user !== '') users[o.cls]?.add(o.user);
    if (o.cls === 0) {
      c.crashOccurrences++;
      if (o.fatal) c.fatalOccurrences++;
      c.crashLastSeenAt = Math.max(c.crashLastSeenAt ?? o.at, o.at);
    } else {
      c.messageOccurrences++;
      c.messageLastSeenAt = Math.max(c.messageLastSeenAt ?? o.at, o.at);
    }
  }
  c.crashUsers = users[0]?.size ?? 0;
  c.messageUsers = users[1]?.size ?? 0;
  return c;
}

/**
 * A group made precounted has an occurrence the ledger already held (counted before, under
 * another key, or by a concurrent batch): its counters are wrong, and the transaction must be
 * rolled back and the batch decided again without precounting.
 */
export class PrecountedStaleError extends Error {
  constructor(readonly stale: number) {
    super(`${stale} precounted occurrence(s) were already in the ledger`);
  }
}

/**
 * Counts a batch's occurrences into their groups' counters in one statement: the ledger lets
 * each occurrence id in once (a replay, a retry or another process counts nothing again), the
 * users' set each user once per group and class; each group's row is written once per batch.
 * Groups are locked in id order first, so two processes' batches wait rather than deadlock.
 * `precounted`: groups this transaction made with these occurrences' counters (`countersOf`);
 * their occurrences enter the ledger and the users' set but add nothing, and should one of them
 * have been in the ledger already, PrecountedStaleError (the caller rolls back and decides again).
 */
export async function countOccurrences(
  q: Queryable,
  os: CountedOccurrence[],
  precounted: ReadonlySet<string> = new Set(),
): Promise<void> {
  if (os.length === 0) return;
  const seen = new Map<string, CountedOccurrence>();
  for (const o of os) seen.set(`${o.projectId}\u0000${o.id}`, o);
  const xs = [...seen.values()].sort((a, b) =>
    a.projectId < b.projectId ? -1 : a.projectId > b.projectId ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
  );
  const groupIds = [...new Set(xs.map((o) => o.groupId))].filter((g) => !precounted.has(g)).sort();
  // A precounted group was made by this transaction: no other can hold or wait for its row.
  if (groupIds.length)
    await q.query(`SELECT 1 FROM ${GROUPS} WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`, [groupIds]);
  const r = await q.query<{ stale: number }>(
    `WITH x AS (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::smallint[], $5::boolean[], $6::bigint[], $7::text[])
         AS x(project_id, id, group_id, cls, fatal, at, user_key)),
     ins AS (
       INSERT INTO crash_occurrence_ledger (project_id, id, group_id) SELECT project_id, id, group_id FROM x
       ON CONFLICT DO NOTHING RETURNING project_id, id),
     fresh AS (SELECT x.* FROM x JOIN ins ON ins.project_id = x.project_id AND ins.id = x.id),
     u AS (
       INSERT INTO crash_group_users (group_id, cls, user_key)
       SELECT DISTINCT group_id, cls, user_key FROM fresh WHERE user_key <> ''
       ON CONFLICT DO NOTHING RETURNING group_id, cls),
     nu AS (
       SELECT group_id, count(*) FILTER (WHERE cls = 0) AS cu, count(*) FILTER (WHERE cls = 1) AS mu
       FROM u WHERE NOT (group_id = ANY($8::uuid[])) GROUP BY group_id),
     agg AS (
       SELECT group_id, count(*) FILTER (WHERE cls = 0) AS co, count(*) FILTER (WHERE cls = 0 AND fatal) AS fo,
         count(*) FILTER (WHERE cls = 1) AS mo, max(at) FILTER (WHERE cls = 0) AS cl, max(at) FILTER (WHERE cls = 1) AS ml
       FROM fresh WHERE NOT (group_id = ANY($8::uuid[])) GROUP BY group_id),
     upd AS (
       UPDATE ${GROUPS} g SET
         crash_occurrences = g.crash_occurrences + agg.co, fatal_occurrences = g.fatal_occurrences + agg.fo,
         message_occurrences = g.message_occurrences + agg.mo,
         crash_users = g.crash_users + COALESCE(nu.cu, 0), message_users = g.message_users + COALESCE(nu.mu, 0),
         crash_last_seen_at = GREATEST(g.crash_last_seen_at, agg.cl), message_last_seen_at = GREATEST(g.message_last_seen_at, agg.ml)
       FROM agg LEFT JOIN nu ON nu.group_id = agg.group_id WHERE g.id = agg.group_id)
     SELECT (SELECT count(*) FROM x WHERE group_id = ANY($8::uuid[]))
       - (SELECT count(*) FROM fresh WHERE group_id = ANY($8::uuid[])) AS stale`,
    [
      xs.map((o) => o.projectId),
      xs.map((o) => o.id),
      xs.map((o) => o.groupId),
      xs.map((o) => o.cls),
      xs.map((o) => o.fatal),
      xs.map((o) => o.at),
      xs.map((o) => o.user),
      [...precounted],
    ],
  );
  const stale = Number(r.rows[0]?.stale ?? 0);
  if (stale > 0) throw new PrecountedStaleError(stale);
}

/**
 * Deletes at most `limit` ledger rows recorded before `before` and answers how many: one short
 * statement, so a backlog is pruned a chunk at a time and never holds a long transaction. The
 * chunk is taken oldest first through the recorded_at index and deleted by ctid (a TID scan: a
 * join back on the key let the planner scan the whole ledger per chunk); rows another pruner
 * holds are skipped, so two workers take different chunks instead of waiting on each other.
 */
export async function pruneLedger(q: Queryable, before: Date, limit: number): Promise<number> {
  const r = await q.query(
    `DELETE FROM crash_occurrence_ledger WHERE ctid = ANY(ARRAY(
       SELECT ctid FROM crash_occurrence_ledger WHERE recorded_at < $1
       ORDER BY recorded_at LIMIT $2 FOR UPDATE SKIP LOCKED))`,
    [before, limit],
  );
  return r.rowCount;
}
