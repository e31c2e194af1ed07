import type { GroupState } from '../../repos/crashGroups/index.ts';
import { storedPair } from '../../repos/crashOccurrences.ts';
import {
  earlierKeys,
  planOccurrence,
  resolveKey,
  type GroupJoin,
  type OccurrencePlan,
  type ReadReport,
} from './plan.ts';
import type { CrashRecorderDeps } from './types.ts';

/**
 * Step `record.group`: the groups the batch's keys lead to, one Postgres read per project, and
 * the retries of reports first stored under another key (before the release's artifacts
 * arrived; under the previous rule), one ClickHouse read per project and only for those. Each
 * report leaves placed (plan.ts); a key with no group yet is decided in the transaction.
 */
export async function placeReports(
  d: Pick<CrashRecorderDeps, 'groups' | 'occurrences'>,
  read: readonly ReadReport[],
  projects: readonly string[],
): Promise<{ plans: OccurrencePlan[]; joins: GroupJoin[] }> {
  const states = new Map<string, Map<string, GroupState>>();
  for (const p of projects) {
    const keys = read
      .filter((x) => x.projectId === p)
      .flatMap((x) => [x.at.key, x.at.legacy, ...(x.raw ? [x.raw.key, x.raw.legacy] : [])]);
    states.set(p, await d.groups.statesByKeys(p, keys));
  }
  const joins: GroupJoin[] = [];
  const none = new Map<string, GroupState>();
  const resolved = read.map((x) => {
    const known = states.get(x.projectId) ?? none;
    return {
      x,
      at: resolveKey(known, x.projectId, x.at, joins),
      raw: x.raw ? resolveKey(known, x.projectId, x.raw, joins) : null,
    };
  });
  const stored = new Map<string, Set<string>>();
  for (const p of projects) {
    const pairs = resolved.filter((r) => r.x.projectId === p).flatMap(earlierKeys);
    stored.set(p, await d.occurrences.hasMany(p, pairs));
  }
  const plans = resolved.map(({ x, at, raw }) =>
    planOccurrence(x, at, raw, (key) => stored.get(x.projectId)?.has(storedPair(key, x.occurrenceId)) ?? false),
  );
  return { plans, joins };
}
