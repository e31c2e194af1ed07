/**
 * Merging crash groups by hand: which groups a request really merges. A merged group's id
 * stands for the group it was merged into (merges are kept one level deep: merging a kept
 * group moves its merged groups along), so naming a merged group names its kept group, and
 * naming groups already part of the kept one changes nothing (a retried request is harmless).
 */

/** At most this many groups are merged by one request. */
export const MAX_MERGE_GROUPS = 100;

export type MergePlan =
  | { outcome: 'not-found' }
  | { outcome: 'unknown'; missing: string[] }
  | { outcome: 'ok'; kept: string; sources: string[] };

/**
 * `known`: each named group of the project and the group it was merged into (null if none).
 * The kept group is the one named in the path, or the group it was merged into.
 */
export function mergePlan(
  known: ReadonlyMap<string, string | null>,
  keptId: string,
  ids: readonly string[],
): MergePlan {
  if (!known.has(keptId)) return { outcome: 'not-found' };
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length) return { outcome: 'unknown', missing };
  const resolve = (id: string) => known.get(id) ?? id;
  const kept = resolve(keptId);
  return { outcome: 'ok', kept, sources: [...new Set(ids.map(resolve))].filter((id) => id !== kept) };
}
