import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../stores/postgres/port.ts';
import {
  enqueueJob,
  NEW_GROUP_JOB,
  NEW_GROUP_WEBHOOKS_JOB,
  REGRESSION_JOB,
  REGRESSION_WEBHOOKS_JOB,
} from '../outbox.ts';
import { hasSubscribers } from '../webhooks.ts';
import { GROUPS, KEYS, STAMP, type GroupState } from './rows.ts';
import type { GroupCounters } from './counters.ts';

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

/** A group a batch opens, with the project it is of. */
export type NewGroupOf = NewGroup & { projectId: string };

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
