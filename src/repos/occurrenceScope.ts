/**
 * Which rows of `crash_occurrences` (and of the crash page's state, clickhouse/011, whose
 * columns have the same names) a read of one group counts: its keys, merged keys read as the
 * kept group's, and a scope of levels, environment and tag.
 */

/**
 * One group's rows: those stored under any of its keys (its own and its merged groups',
 * `storageKeys` of repos/crashGroups/rows.ts).
 */
export const ONE_GROUP = 'project_id = {project:String} AND group_key IN {keys:Array(String)}';

/**
 * Reads a stored key as the key of the group it belongs to now (a merged group's key as the
 * kept group's), so aggregates over a merged group count each occurrence, device and user once.
 */
export interface KeyAliases {
  from: string[];
  to: string[];
}
export const canonical = (a: KeyAliases | undefined) =>
  a?.from.length ? 'transform(group_key, {aliasFrom:Array(String)}, {aliasTo:Array(String)}, group_key)' : 'group_key';
export const aliasParams = (a: KeyAliases | undefined) => (a?.from.length ? { aliasFrom: a.from, aliasTo: a.to } : {});

/** The aliases of groups given as key lists (each group's first key names it; the rest lead to it). */
export function aliasesOf(groups: string[][]): KeyAliases {
  const aliases: KeyAliases = { from: [], to: [] };
  for (const [key, ...older] of groups) {
    if (key === undefined) continue; // a group without keys has nothing to alias
    for (const k of older) {
      aliases.from.push(k);
      aliases.to.push(key);
    }
  }
  return aliases;
}

/** Which of a group's occurrences a read counts: some levels, one environment ('' = sent without one). */
export interface OccurrenceScope {
  levels?: readonly string[];
  environment?: string;
  tag?: { key: string; value: string };
}

export function scopeOf(s: OccurrenceScope): { where: string; params: Record<string, unknown> } {
  let where = '';
  const params: Record<string, unknown> = {};
  if (s.levels !== undefined) {
    where += ' AND level IN {scopeLevels:Array(String)}';
    params.scopeLevels = [...s.levels];
  }
  if (s.environment !== undefined) {
    where += ' AND environment = {scopeEnv:String}';
    params.scopeEnv = s.environment;
  }
  if (s.tag !== undefined) {
    where += ' AND tags[{scopeTagKey:String}] = {scopeTagValue:String}';
    params.scopeTagKey = s.tag.key;
    params.scopeTagValue = s.tag.value;
  }
  return { where, params };
}
