import type { Postgres, Queryable } from '../../stores/postgres/port.ts';
import type { CrashGroupStatus } from '../../domain/crashGroupStatus.ts';
import { mergePlan } from '../../domain/crashGroupMerge.ts';
import { pgResource } from '../exportCore/postgres.ts';
import type { ChangeFilter } from '../exportCore/types.ts';
import { COLUMNS, CRASH_FIELDS, CRASH_PARQUET, GROUPS, KEYS, resolvedId, STAMP, type GroupRow } from './rows.ts';
import { crashGroupAlerts } from './alerts.ts';
import { statesByKeys } from './record.ts';
import { listPage, type ListQuery } from './list.ts';

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

    /** A page of the crash list (list.ts). */
    listPage: (projectId: string, o: ListQuery) => listPage(db, projectId, o),

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
