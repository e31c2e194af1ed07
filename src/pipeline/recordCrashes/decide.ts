import { stackHead } from '../../domain/crashGrouping.ts';
import { statusAfterOccurrence } from '../../domain/crashGroupStatus.ts';
import { recordHistory, SYSTEM_ACTOR } from '../../repos/crashGroupActivity.ts';
import {
  addKeys,
  countOccurrences,
  countersOf,
  createGroups,
  keyInProject,
  moveFirstSeenMany,
  PrecountedStaleError,
  reopenIn,
  statesByKeys,
  type CountedOccurrence,
  type GroupState,
} from '../../repos/crashGroups/index.ts';
import type { OccurrenceRow } from '../../repos/crashOccurrences.ts';
import type { Queryable } from '../../stores/postgres/port.ts';
import { sessionQueries } from '../../repos/sessions.ts';
import { GROUP_RULE_VERSION } from '../../domain/crashGrouping.ts';
import { newKeys, type GroupJoin, type OccurrencePlan } from './plan.ts';
import type { CrashRecorderDeps } from './types.ts';

/**
 * Step `record.decide`: the whole batch's decisions in one Postgres transaction: the groups of
 * first occurrences (INSERT … ON CONFLICT, each exactly once, with their outbox jobs), the
 * counters through the occurrence ledger (each occurrence once), reopenings, firstSeenAt moves
 * and the sessions' flags. A new group is written with its counters (precounted); should the
 * ledger show one of its occurrences counted already, the transaction is rolled back and the
 * batch decided again, every group counted by the ledger. Resolves true when it was.
 */
export async function decideBatch(
  d: Pick<CrashRecorderDeps, 'groups' | 'occurrences'>,
  plans: readonly OccurrencePlan[],
  joins: readonly GroupJoin[],
  projects: readonly string[],
): Promise<boolean> {
  let moved: OccurrenceRow[] = [];
  const decide = (precount: boolean) =>
    d.groups.tx(async (q) => {
      moved = await decideIn(q, plans, joins, projects, precount);
    });
  let recounted = false;
  try {
    await decide(true);
  } catch (err) {
    if (!(err instanceof PrecountedStaleError)) throw err;
    recounted = true;
    await decide(false);
  }
  await d.occurrences.addMany(moved);
  return recounted;
}

/** One try of the transaction; resolves with the occurrences to store again under their group's key. */
async function decideIn(
  q: Queryable,
  plans: readonly OccurrencePlan[],
  joins: readonly GroupJoin[],
  projects: readonly string[],
  precount: boolean,
): Promise<OccurrenceRow[]> {
  const moved: OccurrenceRow[] = [];
  for (const pl of plans) Object.assign(pl, { group: pl.at.group, newGroup: false, regressed: false });
  await addKeys(q, [...joins]);
  const counted = (pl: OccurrencePlan, groupId: string): CountedOccurrence => ({
    projectId: pl.x.projectId,
    id: pl.x.occurrenceId,
    groupId,
    cls: pl.message ? 1 : 0,
    fatal: pl.x.c.isFatal,
    at: pl.x.c.timestamp,
    user: pl.row.user_id ?? '',
  });
  // First occurrences: one new group per key, its first the earliest report of the batch.
  const firsts = newKeys(plans);
  const made = await createGroups(
    q,
    [...firsts].map(([, { first: pl, all }]) => ({
      projectId: pl.x.projectId,
      groupKey: pl.groupKey,
      ruleVersion: pl.ruleVersion,
      message: pl.x.sym.message,
      stackHead: stackHead(pl.x.sym.stack),
      isFatal: pl.x.c.isFatal,
      handled: pl.x.c.handled,
      platform: pl.x.session.platform,
      appVersion: pl.x.session.app_version,
      osVersion: pl.x.session.os_version,
      firstSeenAt: pl.x.c.timestamp,
      firstSessionId: pl.x.c.sessionId,
      // a message is not a new crash: no crash alert (spike rules with its levels alert on messages)
      alert: !pl.message,
      counters: precount ? countersOf(all.map((o) => counted(o, ''))) : undefined,
    })),
  );
  // A group made just now is known without reading it back: its row is what was inserted
  // (a bad release's storm of new groups spent a key lookup per group on this read).
  const fresh = new Map<string, GroupState>();
  for (const [k, { first: pl }] of firsts) {
    const id = made.get(k);
    if (id === undefined) continue;
    pl.newGroup = true;
    fresh.set(k, {
      id,
      group_key: pl.groupKey,
      status: 'open',
      first_seen_at: pl.x.c.timestamp,
      resolved_versions: [],
    });
  }
  // The groups of the others: made by a concurrent first occurrence (groups are never deleted).
  for (const p of projects) {
    const open = plans.filter((pl) => !pl.group && pl.x.projectId === p);
    if (open.length === 0) continue;
    const now = await statesByKeys(
      q,
      p,
      open.filter((pl) => !fresh.has(keyInProject(p, pl.groupKey))).map((pl) => pl.groupKey),
    );
    const late: GroupJoin[] = [];
    for (const pl of open) {
      const g = fresh.get(keyInProject(p, pl.groupKey)) ?? now.get(pl.groupKey);
      if (!g) throw new Error(`crash group ${pl.groupKey} of project ${p} missing after its insert`);
      pl.group = g;
      if (pl.groupKey !== pl.at.key)
        late.push({ projectId: p, key: pl.at.key, groupId: g.id, ruleVersion: GROUP_RULE_VERSION });
      // The key joined another group meanwhile (a concurrent upgrade's join): the occurrence is
      // that group's, stored under its key (the same row on every retry).
      if (g.group_key !== pl.groupKey) moved.push({ ...pl.row, group_key: g.group_key });
    }
    await addKeys(q, late);
  }
  const known = plans.filter((pl): pl is OccurrencePlan & { group: GroupState } => pl.group !== undefined);
  // Regressions: a resolved group's occurrence from a version it had not had, once per (group, version).
  const reopened = new Map<string, boolean>();
  for (const pl of known) {
    const v = pl.x.session.app_version;
    if (pl.newGroup || v === null) continue;
    if (statusAfterOccurrence(pl.group.status, v, pl.group.resolved_versions) !== 'open') continue;
    const k = `${pl.group.id}\u0000${v}`;
    if (!reopened.has(k)) {
      const { projectId } = pl.x;
      const groupId = pl.group.id;
      const platform = pl.x.session.platform;
      reopened.set(
        k,
        await reopenIn(q, projectId, groupId, v, (t) =>
          recordHistory(t, {
            projectId,
            groupId,
            kind: 'regression',
            fromStatus: 'resolved',
            toStatus: 'open',
            actor: SYSTEM_ACTOR,
            appVersion: v,
            platform,
          }),
        ),
      );
      pl.regressed = reopened.get(k) ?? false;
    }
  }
  await moveFirstSeenMany(
    q,
    known.filter((pl) => !pl.newGroup).map((pl) => ({ groupId: pl.group.id, at: pl.x.c.timestamp })),
  );
  await countOccurrences(
    q,
    known.map((pl) => counted(pl, pl.group.id)),
    precount ? new Set([...fresh.values()].map((g) => g.id)) : undefined,
  );
  await sessionQueries.markCrashedMany(
    q,
    plans
      .filter((pl) => pl.flag)
      .map((pl) => ({
        projectId: pl.x.projectId,
        sessionId: pl.x.c.sessionId,
        isFatal: pl.x.c.isFatal,
        at: pl.x.c.timestamp,
      })),
  );
  return moved;
}
