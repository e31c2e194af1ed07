import type { CrashPayload } from '../../domain/crashGrouping.ts';
import { GROUP_RULE_VERSION, LEGACY_RULE_VERSION } from '../../domain/crashGrouping.ts';
import { isMessageLevel, type boundCrashContext, type RawCrashContext } from '../../domain/crashContext.ts';
import { chTime, type OccurrenceRow } from '../../repos/crashOccurrences.ts';
import { keyInProject, type GroupState } from '../../repos/crashGroups/index.ts';
import type { CrashingSession } from '../../repos/sessions.ts';

/**
 * How one report of a batch is placed (no I/O): which group its key leads to, under which key
 * its occurrence is stored, its ClickHouse row, whether it flags its session, and which report
 * of a new key makes the group. The steps around these (src/pipeline/recordCrashes/) do the
 * reads and writes.
 */

/** A stack's keys: the default key (`base`), the key a fingerprint rule makes of it, the previous rule's. */
export type Keyed = { base: string; key: string; legacy: string };

/** A report as the read step left it: its session, context, stack as read, and keys. */
export interface ReadReport {
  /** its place in the batch */
  i: number;
  projectId: string;
  c: CrashPayload & RawCrashContext;
  session: CrashingSession;
  cx: ReturnType<typeof boundCrashContext>;
  sym: { stack: string; message: string; mapped: number };
  occurrenceId: string;
  /** the keys of the stack as the release's artifacts read it */
  at: Keyed;
  /** the keys of the stack as sent, when the artifacts changed it */
  raw: Keyed | null;
}

/** A key with the group it leads to, and the key its occurrences are stored under. */
export type Resolved = Keyed & { group: GroupState | undefined; store: string };

/** A key that joins a group made under another key (a rule's upgrade, a concurrent join). */
export interface GroupJoin {
  projectId: string;
  key: string;
  groupId: string;
  ruleVersion: number;
}

/**
 * The group a key leads to among the groups known. An upgrade never splits a group: a key
 * unknown whose previous rule's key leads to a group joins it (pushed onto `joins`).
 */
export function resolveKey(
  known: ReadonlyMap<string, GroupState>,
  projectId: string,
  k: Keyed,
  joins: GroupJoin[],
): Resolved {
  let group = known.get(k.key);
  if (!group && k.legacy !== k.key) {
    group = known.get(k.legacy);
    if (group) joins.push({ projectId, key: k.key, groupId: group.id, ruleVersion: GROUP_RULE_VERSION });
  }
  return { ...k, group, store: group?.group_key ?? k.key };
}

/**
 * The (key, occurrence) pairs to look up in ClickHouse for a report: only a retry of a report
 * first stored under another key (before the release's artifacts arrived, or under the previous
 * rule) can be stored under one of them.
 */
export function earlierKeys(r: {
  x: Pick<ReadReport, 'occurrenceId'>;
  at: Resolved;
  raw: Resolved | null;
}): { groupKey: string; id: string }[] {
  const id = r.x.occurrenceId;
  return [
    ...(r.raw && r.raw.store !== r.at.store ? [{ groupKey: r.raw.store, id }] : []),
    ...(!r.at.group && r.at.legacy !== r.at.key ? [{ groupKey: r.at.legacy, id }] : []),
    ...(r.raw && !r.raw.group && r.raw.legacy !== r.raw.key ? [{ groupKey: r.raw.legacy, id }] : []),
  ];
}

/** A report placed: its group (decided in the transaction when it has none yet) and its row. */
export interface OccurrencePlan {
  x: ReadReport;
  at: Resolved;
  /** the key its occurrence is stored under, and its group made under */
  groupKey: string;
  ruleVersion: number;
  row: OccurrenceRow;
  /** a message (level info or warning), not a crash */
  message: boolean;
  /** its session is flagged crashed by it */
  flag: boolean;
  /** set in the decide step (known before it when the group exists) */
  group: GroupState | undefined;
  newGroup: boolean;
  regressed: boolean;
}

/**
 * Where a report's occurrence goes. `isStored(key)`: its occurrence is in ClickHouse under that
 * key already (from `earlierKeys`).
 */
export function planOccurrence(
  x: ReadReport,
  first: Resolved,
  raw: Resolved | null,
  isStored: (groupKey: string) => boolean,
): OccurrencePlan {
  let at = first;
  // A retry of a report first recorded before the release's artifacts arrived stays in that
  // try's group: a second key would count it twice and open a group for it.
  if (raw && raw.store !== at.store && isStored(raw.store)) at = raw;
  let groupKey = at.store;
  let ruleVersion = GROUP_RULE_VERSION;
  if (!at.group && at.legacy !== at.key && isStored(at.legacy)) {
    // A retry of a report whose first try, under the previous rule, stored its occurrence and
    // failed before making its group: the group is made under that key, which holds it.
    groupKey = at.legacy;
    ruleVersion = LEGACY_RULE_VERSION;
  }
  const { c, session, cx } = x;
  const message = isMessageLevel(cx.level);
  // A message (level info or warning: captureMessage) is no crash: the session is not flagged.
  const flag = !message && (!session.has_crash || (c.isFatal && session.status !== 'crashed'));
  return {
    x,
    at,
    groupKey,
    ruleVersion,
    row: occurrenceRow(x, groupKey),
    message,
    flag,
    group: at.group,
    newGroup: false,
    regressed: false,
  };
}

/** The occurrence's ClickHouse row (crash_occurrences). */
export function occurrenceRow(x: ReadReport, groupKey: string): OccurrenceRow {
  const { c, session, cx, sym } = x;
  return {
    project_id: x.projectId,
    group_key: groupKey,
    id: x.occurrenceId,
    occurred_at: chTime(c.timestamp),
    session_id: c.sessionId,
    user_id: cx.userId ?? session.user_id,
    device_fingerprint: session.device_fingerprint,
    platform: session.platform,
    os_version: session.os_version,
    app_version: session.app_version,
    brand: session.brand,
    model: session.model,
    message: c.message,
    stack_trace: c.stackTrace,
    is_fatal: c.isFatal,
    handled: c.handled,
    symbolicated_stack: sym.mapped > 0 ? sym.stack : '',
    network_type: session.network_type,
    environment: cx.environment || (session.environment ?? ''),
    level: cx.level,
    tags: cx.tags,
    context: cx.context,
    breadcrumbs: cx.breadcrumbs.length > 0 ? JSON.stringify(cx.breadcrumbs) : '',
    dropped: cx.dropped.length > 0 ? JSON.stringify(cx.dropped) : '',
  };
}

/**
 * The reports without a group, by `keyInProject`: each key's reports, and its first (the
 * earliest of the batch), which makes the group.
 */
export function newKeys(
  plans: readonly OccurrencePlan[],
): Map<string, { first: OccurrencePlan; all: OccurrencePlan[] }> {
  const byKey = new Map<string, { first: OccurrencePlan; all: OccurrencePlan[] }>();
  for (const pl of plans) {
    if (pl.group) continue;
    const k = keyInProject(pl.x.projectId, pl.groupKey);
    const same = byKey.get(k);
    if (!same) byKey.set(k, { first: pl, all: [pl] });
    else {
      same.all.push(pl);
      if (pl.x.c.timestamp < same.first.x.c.timestamp) same.first = pl;
    }
  }
  return byKey;
}
