import { randomUUID } from 'node:crypto';
import type { Postgres, Queryable } from '../stores/postgres/port.ts';
import type { CrashGroupStatus } from '../domain/crashGroupStatus.ts';
import { mergePlan } from '../domain/crashGroupMerge.ts';
import {
  enqueueJob,
  NEW_GROUP_JOB,
  NEW_GROUP_WEBHOOKS_JOB,
  REGRESSION_JOB,
  REGRESSION_WEBHOOKS_JOB,
} from './outbox.ts';
import { hasSubscribers } from './webhooks.ts';
import { pgResource, PG_NOW_MS } from './exportCore/postgres.ts';
import type { ParquetColumn } from './exportCore/parquet.ts';
import type { ChangeFilter } from './exportCore/types.ts';

/**
 * Postgres `crash_groups`: each group's identity (created by its first occurrence), its
 * workflow and the first-occurrence decision. The occurrences and the counters aggregated from
 * them live in ClickHouse (repos/crashOccurrences.ts); recording combines both in
 * pipeline/recordCrashes/, the workflow by hand and the read model in services/crashGroups.ts. No row here is written once per occurrence: a storm of one crash
 * must not queue on the group's row lock (docs/decisions.md, Crashes).
 */
const GROUPS = 'crash_groups';
/** The keys that lead to a group (migration 013): its own, and those that joined it. */
const KEYS = 'crash_group_keys';

/** What Postgres holds of a group: identity, workflow, and the context of its first occurrence. */
export interface GroupRow {
  id: string;
  group_key: string;
  message: string;
  status: CrashGroupStatus;
  is_fatal: boolean;
  handled: boolean;
  platform: string | null;
  app_version: string | null;
  os_version: string | null;
  first_seen_at: number;
  updated_at: number;
  stack_head: string;
  summary: string | null;
  summary_source: string | null;
  summary_at: Date | string | null;
  resolved_versions: string[];
  /** The own keys of the groups merged into this one: their occurrences are stored under them. */
  merged_keys: string[];
  /** The group this one was merged into (null: not merged). */
  merged_into: string | null;
}

/** Every key a group's occurrences are stored under in ClickHouse: its own and its merged groups'. */
export const storageKeys = (r: Pick<GroupRow, 'group_key' | 'merged_keys'>): string[] => [
  r.group_key,
  ...r.merged_keys,
];

const COLUMNS =
  'id, group_key, message, status, is_fatal, handled, platform, app_version, os_version, first_seen_at, updated_at, stack_head, summary, summary_source, summary_at, resolved_versions, merged_into, ' +
  `ARRAY(SELECT m.group_key FROM crash_groups m WHERE m.merged_into = crash_groups.id ORDER BY m.group_key) AS merged_keys`;

/** The id a group id answers for: the group it was merged into, or itself (`$1` the project, `n` the id's parameter). */
const resolvedId = (n: number) =>
  `COALESCE((SELECT merged_into FROM crash_groups WHERE project_id = $1 AND id = $${n}), $${n})`;

/** What a group's first occurrence writes. */
export interface NewGroup {
  /** The group's own key (its occurrences are stored under it); it leads to the group with `ruleVersion`. */
  groupKey: string;
  ruleVersion: number;
  message: string;
  stackHead: string;
  isFatal: boolean;
  handled: boolean;
  platform: string | null;
  appVersion: string | null;
  osVersion: string | null;
  firstSeenAt: number;
  firstSessionId: string;
  /** false: no new-group alert or webhook (a group opened by a message: rules alert on those) */
  alert?: boolean;
  /**
   * The counters of the batch's occurrences of this key, written with the row (`countersOf`):
   * a group made with its counters is written once, not inserted and then updated (the update
   * wrote every index of the row a second time). `countOccurrences` is then told the group is
   * precounted.
   */
  counters?: GroupCounters;
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

/** The part of a group the crash workflow decides on. */
export interface GroupState {
  id: string;
  group_key: string;
  status: CrashGroupStatus;
  first_seen_at: number;
  resolved_versions: string[];
}

/**
 * A group's updatedAt is the latest of its creation, its status or summary change, and the
 * time (server clock) its latest occurrence was recorded: new occurrences change the counters.
 * Not lastSeenAt itself: that is the device's clock, and a late report of an old crash changes
 * occurrenceCount without moving it (docs/decisions.md, "Incremental exports"). Occurrences
 * write no Postgres row each: they mark their group, and the marks are stamped together at
 * most once per EXPORT_TOUCH_INTERVAL_MS (services/index.ts), after the occurrence committed.
 */
const STAMP = `updated_at = ${PG_NOW_MS}`;

/** The export's columns of a crash group, in the contract's order (the read model adds the rest). */
export const CRASH_PARQUET: ParquetColumn[] = [
  { name: 'id', type: 'string', nullable: false },
  { name: 'message', type: 'string', nullable: false },
  { name: 'status', type: 'string', nullable: false },
  { name: 'isFatal', type: 'boolean', nullable: false },
  { name: 'handled', type: 'boolean', nullable: false },
  { name: 'occurrenceCount', type: 'int64', nullable: false },
  { name: 'affectedDevices', type: 'int64', nullable: false },
  { name: 'platform', type: 'string', nullable: true },
  { name: 'appVersion', type: 'string', nullable: true },
  { name: 'osVersion', type: 'string', nullable: true },
  { name: 'firstSeenAt', type: 'timestamp', nullable: false },
  { name: 'lastSeenAt', type: 'timestamp', nullable: false },
  { name: 'updatedAt', type: 'timestamp', nullable: false },
  { name: 'mergedInto', type: 'string', nullable: true },
];

export const CRASH_FIELDS = CRASH_PARQUET.map((c) => c.name);

/** What an alert needs of the group, and the session of its first occurrence. */
export interface AlertFacts {
  groupId: string;
  projectId: string;
  message: string;
  stackHead: string;
  isFatal: boolean;
  handled: boolean;
  firstSeenAt: number;
  summary: string | null;
  summarySource: string | null;
  platform: string | null;
  appVersion: string | null;
  osVersion: string | null;
  firstSessionId: string | null;
}

/** The alert's reads and its one write: Postgres only, so the worker process (no ClickHouse) can use them. */
export function crashGroupAlerts(db: Postgres) {
  return {
    /** The group (any project: the outbox job names it by id) and its first occurrence's session. */
    async alertFacts(groupId: string): Promise<AlertFacts | null> {
      const r = await db.query<{
        id: string;
        project_id: string;
        message: string;
        stack_head: string;
        is_fatal: boolean;
        handled: boolean;
        first_seen_at: number;
        summary: string | null;
        summary_source: string | null;
        platform: string | null;
        app_version: string | null;
        os_version: string | null;
        first_session_id: string | null;
      }>(
        `SELECT id, project_id, message, stack_head, is_fatal, handled, first_seen_at, summary, summary_source,
                platform, app_version, os_version, first_session_id
         FROM ${GROUPS} WHERE id = $1`,
        [groupId],
      );
      const x = r.rows[0];
      if (!x) return null;
      return {
        groupId: x.id,
        projectId: x.project_id,
        message: x.message,
        stackHead: x.stack_head,
        isFatal: x.is_fatal,
        handled: x.handled,
        firstSeenAt: Number(x.first_seen_at),
        summary: x.summary,
        summarySource: x.summary_source,
        platform: x.platform,
        appVersion: x.app_version,
        osVersion: x.os_version,
        firstSessionId: x.first_session_id,
      };
    },

    /** Stores a summary unless one is there already; returns the one that is stored. */
    async storeSummary(groupId: string, summary: string, source: string): Promise<{ summary: string; source: string }> {
      await db.query(
        `UPDATE ${GROUPS} SET summary = $2, summary_source = $3, summary_at = now(), ${STAMP} WHERE id = $1 AND summary IS NULL`,
        [groupId, summary, source],
      );
      const r = await db.query<{ summary: string; summary_source: string }>(
        `SELECT summary, summary_source FROM ${GROUPS} WHERE id = $1`,
        [groupId],
      );
      const row = r.rows[0];
      return row ? { summary: row.summary, source: row.summary_source } : { summary, source };
    },
  };
}

/** A group a batch opens, with the project it is of. */
export type NewGroupOf = NewGroup & { projectId: string };

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

/** A page of the crash list: which class of counters, which filters, which order. */
export interface ListQuery {
  status?: CrashGroupStatus;
  /** the counters of the crash levels (fatal, error) or of the message levels (warning, info) */
  cls: 0 | 1;
  /** crash class only: groups with a fatal occurrence, or with none */
  fatal?: boolean;
  sort: 'lastSeen' | 'firstSeen' | 'occurrences' | 'users';
  /** a substring of the message or of the stack's head, any case */
  search?: string;
  offset: number;
  limit: number;
  /** the total is counted up to this many */
  countUpTo: number;
}

/** A listed group: its row and the counters the list ordered it by. */
export type ListedRow = GroupRow & { users: number };

/** `%`, `_` and `\` of a search taken literally by ILIKE. */
export const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The group each key leads to, for many keys of one project at once (byKey's rule: through
 * crash_group_keys, else the group whose own key it is; a merged group answers with the kept one).
 */
export async function statesByKeys(q: Queryable, projectId: string, keys: string[]): Promise<Map<string, GroupState>> {
  if (keys.length === 0) return new Map();
  // `= ANY(array)`: one index scan over the keys (a join of the unnested array would let the
  // planner pick sequential scans, and the embedded store never analyzes its tables); only the
  // keys found are joined to their groups, by primary key.
  const r = await q.query<GroupState & { key: string }>(
    `WITH k AS (
       SELECT ck.key, ck.group_id AS gid FROM ${KEYS} ck WHERE ck.project_id = $1 AND ck.key = ANY($2::text[])
       UNION ALL
       SELECT g0.group_key, g0.id FROM ${GROUPS} g0 WHERE g0.project_id = $1 AND g0.group_key = ANY($2::text[])
         AND NOT EXISTS (SELECT 1 FROM ${KEYS} c2 WHERE c2.project_id = $1 AND c2.key = g0.group_key))
     SELECT k.key, g.id, g.group_key, g.status, g.first_seen_at, g.resolved_versions
     FROM k CROSS JOIN LATERAL (SELECT COALESCE(m.merged_into, m.id) AS rid FROM ${GROUPS} m WHERE m.id = k.gid) m
     CROSS JOIN LATERAL (SELECT * FROM ${GROUPS} g1 WHERE g1.id = m.rid) g`,
    [projectId, [...new Set(keys)]],
  );
  return new Map(r.rows.map(({ key, ...g }) => [key, g]));
}

/** A group key within its project, as createGroups' answer holds it. */
export const keyInProject = (projectId: string, groupKey: string) => `${projectId}\u0000${groupKey}`;

/**
 * Opens the groups of a batch's first occurrences in one statement, each with its key and (when
 * it alerts) its outbox jobs. ON CONFLICT decides each first occurrence exactly once: the map
 * holds the groups this call made, by project and key. A group whose key another group took
 * meanwhile (a concurrent upgrade's join, a merge) is not made: its key leads to that group.
 */
export async function createGroups(q: Queryable, gs: NewGroupOf[]): Promise<Map<string, string>> {
  const made = new Map<string, string>();
  if (gs.length === 0) return made;
  const ids: string[] = gs.map(() => randomUUID());
  const col = <T>(f: (g: NewGroupOf) => T) => gs.map(f);
  const counter = <T>(f: (c: GroupCounters) => T, none: T) => gs.map((g) => (g.counters ? f(g.counters) : none));
  const created = await q.query<{ id: string; project_id: string; group_key: string }>(
    `INSERT INTO ${GROUPS} (id, project_id, group_key, message, stack_head, is_fatal, handled,
       platform, app_version, os_version, first_seen_at, first_session_id,
       crash_occurrences, fatal_occurrences, message_occurrences, crash_users, message_users,
       crash_last_seen_at, message_last_seen_at)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::boolean[],
       $8::text[], $9::text[], $10::text[], $11::bigint[], $12::uuid[],
       $13::bigint[], $14::bigint[], $15::bigint[], $16::bigint[], $17::bigint[], $18::bigint[], $19::bigint[])
     ON CONFLICT (project_id, group_key) DO NOTHING RETURNING id, project_id, group_key`,
    [
      ids,
      col((g) => g.projectId),
      col((g) => g.groupKey),
      col((g) => g.message),
      col((g) => g.stackHead),
      col((g) => g.isFatal),
      col((g) => g.handled),
      col((g) => g.platform),
      col((g) => g.appVersion),
      col((g) => g.osVersion),
      col((g) => g.firstSeenAt),
      col((g) => g.firstSessionId),
      counter((c) => c.crashOccurrences, 0),
      counter((c) => c.fatalOccurrences, 0),
      counter((c) => c.messageOccurrences, 0),
      counter((c) => c.crashUsers, 0),
      counter((c) => c.messageUsers, 0),
      counter((c) => c.crashLastSeenAt, null),
      counter((c) => c.messageLastSeenAt, null),
    ],
  );
  if (created.rows.length === 0) return made;
  const byId = new Map(gs.map((g, i) => [ids[i], g]));
  const mine = created.rows.map((r) => ({ id: r.id, g: byId.get(r.id) as NewGroupOf }));
  const keyed = await q.query<{ group_id: string }>(
    `INSERT INTO ${KEYS} (project_id, key, group_id, rule_version)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::int[])
     ON CONFLICT (project_id, key) DO NOTHING RETURNING group_id`,
    [
      mine.map((m) => m.g.projectId),
      mine.map((m) => m.g.groupKey),
      mine.map((m) => m.id),
      mine.map((m) => m.g.ruleVersion),
    ],
  );
  const ok = new Set(keyed.rows.map((r) => r.group_id));
  const taken = mine.filter((m) => !ok.has(m.id)).map((m) => m.id);
  if (taken.length) await q.query(`DELETE FROM ${GROUPS} WHERE id = ANY($1::uuid[])`, [taken]);
  const kept = mine.filter((m) => ok.has(m.id));
  for (const m of kept) made.set(keyInProject(m.g.projectId, m.g.groupKey), m.id);
  // A group opened by a message alerts only through rules (alert false).
  const alerting = kept.filter((m) => m.g.alert !== false);
  if (alerting.length) {
    const hooked = new Set<string>();
    for (const p of new Set(alerting.map((m) => m.g.projectId))) {
      if (await hasSubscribers(q, p, 'crash_group.new')) hooked.add(p);
    }
    const jobs = alerting.flatMap((m) => [
      [m.g.projectId, m.id, NEW_GROUP_JOB],
      ...(hooked.has(m.g.projectId) ? [[m.g.projectId, m.id, NEW_GROUP_WEBHOOKS_JOB]] : []),
    ]);
    await q.query(
      `INSERT INTO alert_outbox (project_id, group_id, kind, ref)
       SELECT p, g, k, NULL FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS x(p, g, k) ON CONFLICT DO NOTHING`,
      [jobs.map((j) => j[0]), jobs.map((j) => j[1]), jobs.map((j) => j[2])],
    );
  }
  return made;
}

/** Lets keys lead to existing groups (a key that leads somewhere already keeps its group). */
export async function addKeys(
  q: Queryable,
  ks: { projectId: string; key: string; groupId: string; ruleVersion: number }[],
): Promise<void> {
  if (ks.length === 0) return;
  await q.query(
    `INSERT INTO ${KEYS} (project_id, key, group_id, rule_version)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::int[]) ON CONFLICT (project_id, key) DO NOTHING`,
    [ks.map((k) => k.projectId), ks.map((k) => k.key), ks.map((k) => k.groupId), ks.map((k) => k.ruleVersion)],
  );
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

/** Occurrences older than their group's firstSeenAt move it back (one statement for a batch). */
export async function moveFirstSeenMany(q: Queryable, xs: { groupId: string; at: number }[]): Promise<void> {
  if (xs.length === 0) return;
  await q.query(
    `UPDATE ${GROUPS} g SET first_seen_at = x.at, ${STAMP}
     FROM (SELECT gid, min(at) AS at FROM unnest($1::uuid[], $2::bigint[]) AS u(gid, at) GROUP BY gid) x
     WHERE g.id = x.gid AND g.first_seen_at > x.at`,
    [xs.map((x) => x.groupId), xs.map((x) => x.at)],
  );
}

/**
 * Reopens a resolved group for an occurrence of a version it had not had, in the caller's
 * transaction, re-checked under the row lock. True when it reopened.
 */
export async function reopenIn(
  q: Queryable,
  projectId: string,
  groupId: string,
  appVersion: string,
  reopened?: (q: Queryable) => Promise<void>,
): Promise<boolean> {
  const r = await q.query(
    `UPDATE ${GROUPS} SET status = 'open', ${STAMP}
     WHERE project_id = $1 AND id = $2 AND status = 'resolved' AND NOT ($3 = ANY(resolved_versions))`,
    [projectId, groupId, appVersion],
  );
  const done = (r.rowCount ?? 0) > 0;
  if (done) {
    // The regression's record (its history) and its alert commit with the reopening. The alert
    // is keyed by the version: resolving again snapshots it, so it can never reopen the group
    // twice and no retry makes a second job.
    if (reopened) await reopened(q);
    await enqueueNotices(q, projectId, groupId, 'crash_group.regressed', appVersion);
  }
  return done;
}

export type UpdateStatusResult = { outcome: 'not-found' } | { outcome: 'ok'; row: GroupRow };

export type MergeResult =
  | { outcome: 'not-found' }
  | { outcome: 'unknown'; missing: string[] }
  | { outcome: 'ok'; keptId: string; merged: string[] };

export function crashGroupsRepo(db: Postgres, opts: { changeLagMs: number } = { changeLagMs: 0 }) {
  return {
    ...crashGroupAlerts(db),

    /** The group each key of a project leads to. */
    statesByKeys: (projectId: string, keys: string[]) => statesByKeys(db, projectId, keys),

    /** Runs `fn` in one transaction (a batch of crashes). */
    tx: <T>(fn: (q: Queryable) => Promise<T>) => db.tx(fn),

    /**
     * A page of the crash list, filtered, ordered and cut in Postgres on the groups' counters
     * (an index per order, postgres/018), with the total the filters leave.
     */
    async listPage(projectId: string, o: ListQuery): Promise<{ rows: ListedRow[]; total: number }> {
      const c = o.cls === 0 ? 'crash' : 'message';
      const params: unknown[] = [projectId];
      // The partial indexes' own predicate, written the same way so the planner can use them.
      let w = `project_id = $1 AND merged_into IS NULL AND ${c}_occurrences > 0`;
      if (o.status) w += ` AND status = $${params.push(o.status)}`;
      if (o.cls === 0 && o.fatal !== undefined)
        w += o.fatal ? ' AND fatal_occurrences > 0' : ' AND fatal_occurrences = 0';
      if (o.search) w += ` AND (message || ' ' || stack_head) ILIKE $${params.push(`%${likeLiteral(o.search)}%`)}`;
      const by = {
        lastSeen: `${c}_last_seen_at`,
        firstSeen: 'first_seen_at',
        occurrences: `${c}_occurrences`,
        users: `${c}_users`,
      }[o.sort];
      const [page, count] = await Promise.all([
        db.query<ListedRow>(
          `SELECT ${COLUMNS}, ${c}_users AS users FROM ${GROUPS} WHERE ${w}
           ORDER BY ${by} DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
          [...params, o.limit, o.offset],
        ),
        // Counted up to `countUpTo` (services/crashGroups.ts): counting 100k index entries was
        // most of a page's time, and a number past what the reader can page to changes nothing.
        db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${GROUPS} WHERE ${w} LIMIT $${params.length + 1}) t`,
          [...params, o.countUpTo],
        ),
      ]);
      return { rows: page.rows, total: Number(count.rows[0]?.n ?? 0) };
    },

    /** The project's groups made before their counters were kept (postgres/018), at most `limit`. */
    async uncounted(projectId: string, limit: number): Promise<GroupRow[]> {
      const r = await db.query<GroupRow>(
        `SELECT ${COLUMNS} FROM ${GROUPS} WHERE project_id = $1 AND NOT counted LIMIT $2`,
        [projectId, limit],
      );
      return r.rows;
    },

    /**
     * Sets the counters of groups made before they were kept, from all their occurrences in
     * ClickHouse (those counted since included), once: `NOT counted`.
     */
    async setCounted(
      xs: {
        id: string;
        crash: number;
        fatal: number;
        crashUsers: number;
        crashLast: number | null;
        message: number;
        messageUsers: number;
        messageLast: number | null;
      }[],
    ): Promise<void> {
      if (xs.length === 0) return;
      await db.query(
        `UPDATE ${GROUPS} g SET counted = true, crash_occurrences = x.c, fatal_occurrences = x.f,
           crash_users = x.cu, crash_last_seen_at = GREATEST(g.crash_last_seen_at, x.cl),
           message_occurrences = x.m, message_users = x.mu, message_last_seen_at = GREATEST(g.message_last_seen_at, x.ml)
         FROM unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[])
           AS x(id, c, f, cu, cl, m, mu, ml)
         WHERE g.id = x.id AND NOT g.counted`,
        [
          xs.map((x) => x.id),
          xs.map((x) => x.crash),
          xs.map((x) => x.fatal),
          xs.map((x) => x.crashUsers),
          xs.map((x) => x.crashLast),
          xs.map((x) => x.message),
          xs.map((x) => x.messageUsers),
          xs.map((x) => x.messageLast),
        ],
      );
    },

    /** Moves the updatedAt of groups that had new occurrences (the coalesced marks of the crash workflow). */
    async touch(projectId: string, groupIds: readonly string[]): Promise<void> {
      await db.query(`UPDATE ${GROUPS} SET ${STAMP} WHERE project_id = $1 AND id = ANY($2::uuid[])`, [
        projectId,
        groupIds,
      ]);
    },

    async row(projectId: string, groupId: string): Promise<GroupRow | null> {
      const r = await db.query<GroupRow>(
        `SELECT ${COLUMNS} FROM ${GROUPS} WHERE project_id = $1 AND id = ${resolvedId(2)}`,
        [projectId, groupId],
      );
      return r.rows[0] ?? null;
    },

    /** The project's groups, of one status or all (merged groups are part of the one they were merged into). */
    async rows(projectId: string, status?: CrashGroupStatus): Promise<GroupRow[]> {
      const params: unknown[] = [projectId];
      const w = `project_id = $1 AND merged_into IS NULL${status ? ` AND status = $${params.push(status)}` : ''}`;
      return (await db.query<GroupRow>(`SELECT ${COLUMNS} FROM ${GROUPS} WHERE ${w}`, params)).rows;
    },

    /**
     * Groups by the key their occurrences are stored under (a session's occurrences, a spike's
     * keys): a merged group's key answers with the group it was merged into.
     */
    async byKeys(projectId: string, keys: string[]) {
      if (keys.length === 0) return [];
      return (
        await db.query<{ id: string; group_key: string; message: string; status: CrashGroupStatus }>(
          `SELECT COALESCE(k.id, g.id) AS id, g.group_key, COALESCE(k.message, g.message) AS message, COALESCE(k.status, g.status) AS status
         FROM ${GROUPS} g LEFT JOIN ${GROUPS} k ON k.id = g.merged_into
         WHERE g.project_id = $1 AND g.group_key = ANY($2::text[])`,
          [projectId, keys],
        )
      ).rows;
    },

    /**
     * Merges groups into the one kept, in one transaction: every key that led to a merged group
     * leads to the kept one, the merged rows are marked (so their own keys' occurrences count
     * in the kept group, and their ids answer with it), their history and comments move, and the
     * kept group's firstSeenAt is the earliest. A merged id stands for the group it was merged
     * into; ids that already are part of the kept group change nothing (a retry is harmless).
     * `merged` runs in the transaction with the groups actually merged.
     */
    async merge(
      projectId: string,
      keptId: string,
      ids: string[],
      merged?: (q: Queryable, keptId: string, mergedIds: string[]) => Promise<void>,
    ): Promise<MergeResult> {
      return db.tx(async (q): Promise<MergeResult> => {
        // Row locks in id order, so two merges of overlapping groups wait rather than deadlock.
        const lock = async (xs: string[]) =>
          new Map(
            (
              await q.query<{ id: string; merged_into: string | null }>(
                `SELECT id, merged_into FROM ${GROUPS} WHERE project_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR UPDATE`,
                [projectId, xs],
              )
            ).rows.map((r) => [r.id, r.merged_into]),
          );
        const plan = mergePlan(await lock([...new Set([keptId, ...ids])]), keptId, ids);
        if (plan.outcome !== 'ok') return plan;
        const { kept, sources } = plan;
        if (sources.length === 0) return { outcome: 'ok', keptId: kept, merged: [] };
        await lock([kept, ...sources]);
        await q.query(
          `UPDATE ${GROUPS} SET merged_into = $2, ${STAMP} WHERE project_id = $1 AND (id = ANY($3::uuid[]) OR merged_into = ANY($3::uuid[]))`,
          [projectId, kept, sources],
        );
        await q.query(`UPDATE ${KEYS} SET group_id = $2 WHERE project_id = $1 AND group_id = ANY($3::uuid[])`, [
          projectId,
          kept,
          sources,
        ]);
        await q.query(
          `UPDATE crash_group_history SET group_id = $2 WHERE project_id = $1 AND group_id = ANY($3::uuid[])`,
          [projectId, kept, sources],
        );
        await q.query(
          `UPDATE crash_group_comments SET group_id = $2 WHERE project_id = $1 AND group_id = ANY($3::uuid[])`,
          [projectId, kept, sources],
        );
        // The merged groups' counters join the kept one's (its list order); users are summed, so
        // one who hit both counts twice there until the page's figures (ClickHouse) say otherwise.
        await q.query(
          `UPDATE ${GROUPS} k SET ${STAMP}, first_seen_at = LEAST(k.first_seen_at, m.first),
             crash_occurrences = k.crash_occurrences + m.co, fatal_occurrences = k.fatal_occurrences + m.fo,
             crash_users = k.crash_users + m.cu, crash_last_seen_at = GREATEST(k.crash_last_seen_at, m.cl),
             message_occurrences = k.message_occurrences + m.mo, message_users = k.message_users + m.mu,
             message_last_seen_at = GREATEST(k.message_last_seen_at, m.ml)
           FROM (SELECT min(first_seen_at) AS first, COALESCE(sum(crash_occurrences), 0) AS co,
                   COALESCE(sum(fatal_occurrences), 0) AS fo, COALESCE(sum(crash_users), 0) AS cu, max(crash_last_seen_at) AS cl,
                   COALESCE(sum(message_occurrences), 0) AS mo, COALESCE(sum(message_users), 0) AS mu, max(message_last_seen_at) AS ml
                 FROM ${GROUPS} WHERE project_id = $1 AND id = ANY($3::uuid[])) m
           WHERE k.project_id = $1 AND k.id = $2`,
          [projectId, kept, sources],
        );
        await merged?.(q, kept, sources);
        return { outcome: 'ok', keptId: kept, merged: sources };
      });
    },

    /** The project's merged groups' own keys and the own key of the group each was merged into. */
    async mergedKeys(projectId: string): Promise<{ from: string[]; to: string[] }> {
      const r = await db.query<{ f: string; t: string }>(
        `SELECT g.group_key AS f, k.group_key AS t FROM ${GROUPS} g JOIN ${GROUPS} k ON k.id = g.merged_into WHERE g.project_id = $1`,
        [projectId],
      );
      return { from: r.rows.map((x) => x.f), to: r.rows.map((x) => x.t) };
    },

    /**
     * A status change, decided on the group as it is under its row lock: `decide` returns the
     * new status (and the versions a resolution snapshots), or null to change nothing.
     */
    async updateStatus(
      projectId: string,
      groupId: string,
      decide: (row: GroupRow) => Promise<{ status: CrashGroupStatus; resolvedVersions: string[] | null } | null>,
      /** Runs in the change's transaction (its history entry commits with it). */
      changed?: (q: Queryable, from: CrashGroupStatus, to: CrashGroupStatus, groupId: string) => Promise<void>,
    ): Promise<UpdateStatusResult> {
      return db.tx(async (q): Promise<UpdateStatusResult> => {
        const g = await q.query<GroupRow>(
          `SELECT ${COLUMNS} FROM ${GROUPS} WHERE project_id = $1 AND id = ${resolvedId(2)} FOR UPDATE`,
          [projectId, groupId],
        );
        const row = g.rows[0];
        if (!row) return { outcome: 'not-found' };
        const change = await decide(row);
        if (!change) return { outcome: 'ok', row };
        const u = await q.query<GroupRow>(
          `UPDATE ${GROUPS} SET status = $3, ${STAMP}, resolved_versions = COALESCE($4::text[], resolved_versions)
           WHERE project_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
          [projectId, row.id, change.status, change.resolvedVersions],
        );
        const updated = u.rows[0];
        if (!updated) throw new Error(`crash group ${groupId} vanished under its row lock`);
        await changed?.(q, row.status, change.status, row.id);
        return { outcome: 'ok', row: updated };
      });
    },

    /**
     * Crash groups of a project by (firstSeenAt, id), or by (updatedAt, id) with a change window;
     * `shape` turns a page of rows into export rows (the counters come from ClickHouse).
     */
    exportResource: (shape: (projectId: string, rows: GroupRow[]) => Promise<Record<string, unknown>[]>) =>
      pgResource<ChangeFilter, GroupRow & Record<string, unknown>>(
        db,
        {
          name: 'crashes',
          fields: CRASH_FIELDS,
          parquet: CRASH_PARQUET,
          table: GROUPS,
          columns: COLUMNS,
          key: ['first_seen_at', 'id'],
          // A merged group is part of the one it was merged into, so a full export leaves it out. A
          // change window keeps it, once, with `mergedInto`: a consumer syncing by changes holds
          // its last row and must learn to drop it (the merge stamps it).
          where: (f) => (f.changes ? '' : ' AND merged_into IS NULL'),
          shape,
        },
        { lagMs: opts.changeLagMs },
      ),
  };
}

export type CrashGroupsRepo = ReturnType<typeof crashGroupsRepo>;

/** A new group's and a regression's jobs: its email, and its webhook posts (the same job shape for both). */
const NOTICE_JOBS = {
  'crash_group.new': { email: NEW_GROUP_JOB, webhooks: NEW_GROUP_WEBHOOKS_JOB },
  'crash_group.regressed': { email: REGRESSION_JOB, webhooks: REGRESSION_WEBHOOKS_JOB },
} as const;

/**
 * A group's notice jobs in the caller's transaction: the email job, and the webhook job only for a
 * project with a webhook that wants the event (the others get no extra job). `ref`: the
 * regression's version.
 */
async function enqueueNotices(
  q: Queryable,
  projectId: string,
  groupId: string,
  event: keyof typeof NOTICE_JOBS,
  ref?: string,
) {
  const jobs = NOTICE_JOBS[event];
  await enqueueJob(q, projectId, groupId, jobs.email, ref);
  if (await hasSubscribers(q, projectId, event)) await enqueueJob(q, projectId, groupId, jobs.webhooks, ref);
}
