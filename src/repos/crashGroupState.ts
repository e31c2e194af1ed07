import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { aliasParams, canonical, aliasesOf, ONE_GROUP, type OccurrenceScope, scopeOf } from './occurrenceScope.ts';
import { factsByKey, type FactsRow, type OccurrenceFacts } from './occurrenceFacts.ts';

/**
 * The crash page's state (clickhouse/011, moved to a finer index by 012): a group's facts, breakdown
 * and environments merged from its rows per (dimension, value, UTC day, environment, level),
 * a few hundred rows whatever the number of its occurrences. Scopes of levels and environment
 * read it (both are in its key); a tag scope is read from the occurrences by the caller.
 */
const STATE = 'crash_group_state';
const OCCURRENCES = 'crash_occurrences';

/** The breakdown's dimensions, as the state names them. */
export type StateDimension = 'platform' | 'deviceModel' | 'osVersion' | 'release';

/**
 * The dimension values of an occurrence, spelled as the migration's view spells them (keep both
 * the same): what a slice with a retry in it is recounted with.
 */
const DIMENSION_VALUES = `[('platform', ifNull(platform, '')),
    ('deviceModel', trim(concat(ifNull(brand, ''), ' ', ifNull(model, '')))),
    ('osVersion', if(isNull(platform) AND isNull(os_version), '', trim(concat(ifNull(platform, ''), ' ', ifNull(os_version, ''))))),
    ('release', ifNull(app_version, ''))]`;

/** One value of a dimension: distinct occurrences (exact) and devices (a sketch); value null: unknown. */
export interface DimensionCount {
  dimension: StateDimension;
  value: string | null;
  occurrences: number;
  devices: number;
}

/** One (day, environment, level) of a group: its physical rows and its distinct occurrences. */
interface Slice {
  day: string;
  environment: string;
  level: string;
  rows: number;
  ids: number;
}

function stateScope(only: OccurrenceScope) {
  if (only.tag !== undefined) throw new Error('a tag scope is read from the occurrences, not the state');
  return scopeOf(only);
}

export function crashGroupState(ch: ClickHouse) {
  /**
   * A group's slices (day, environment, level) with their physical rows and distinct ids. The
   * crash page asks for its breakdown, versions and environments at once, and each needs these:
   * callers asking for the same slices while a read is in flight share it (nothing is kept after).
   */
  const inFlight = new Map<string, Promise<Slice[]>>();
  function slices(projectId: string, keys: string[], only: OccurrenceScope): Promise<Slice[]> {
    const scope = stateScope(only);
    const params = { project: projectId, keys, ...scope.params };
    const id = JSON.stringify(params);
    const running = inFlight.get(id);
    if (running) return running;
    const read = ch
      .query<{ d: string; e: string; l: string; r: number; n: number }>(
        `SELECT toString(day) AS d, toString(environment) AS e, toString(level) AS l, sum(rows) AS r,
           uniqExactMerge(occurrences) AS n
         FROM ${STATE} WHERE ${ONE_GROUP} AND dimension = ''${scope.where} GROUP BY day, environment, level`,
        params,
      )
      .then((rows) =>
        rows.map((x) => ({ day: x.d, environment: x.e, level: x.l, rows: Number(x.r), ids: Number(x.n) })),
      )
      .finally(() => inFlight.delete(id));
    inFlight.set(id, read);
    return read;
  }

  /**
   * The slices of a group that hold a retried report: there `rows` counts it twice, so their
   * dimension counts are read from the occurrences. Rare, and each slice is one day of one group.
   */
  async function retriedSlices(projectId: string, keys: string[], only: OccurrenceScope) {
    const retried = (await slices(projectId, keys, only)).filter((x) => x.rows !== x.ids);
    return { dd: retried.map((x) => x.day), de: retried.map((x) => x.environment), dl: retried.map((x) => x.level) };
  }

  return {
    /**
     * The facts of each group (its keys, the first naming it): occurrences, devices and users as
     * distinct sets merged over the slices, the latest occurrence's context by (occurredAt, id).
     */
    async facts(projectId: string, groups: string[][], only: OccurrenceScope): Promise<Map<string, OccurrenceFacts>> {
      if (groups.length === 0) return new Map();
      const scope = stateScope(only);
      const aliases = aliasesOf(groups);
      // Dimension rows carry empty id, device, user and latest states, so they add nothing to those.
      // One level of merging: a group's slices hold disjoint ids (an id's slice is fixed by its
      // report), so the union of their id sets counts what the sum of their counts would, and the
      // states need no re-serialising per slice.
      const rows = await ch.query<FactsRow>(
        `SELECT ${canonical(aliases)} AS k, uniqExactMerge(occurrences) AS n, uniqExactMerge(devices) AS d,
           uniqExactMerge(users) AS u, toUnixTimestamp64Milli(min(first_at)) AS first,
           toUnixTimestamp64Milli(max(last_at)) AS last, argMaxMerge(latest) AS latest,
           max(fatal) AS fatal, min(handled) AS handled,
           arraySort(groupUniqArrayIf(value, dimension = 'release' AND value != '')) AS versions,
           arraySort(groupUniqArrayIf(value, dimension = 'platform' AND value != '')) AS platforms,
           groupUniqArray(level) AS levels
         FROM ${STATE}
         WHERE ${ONE_GROUP} AND dimension IN ('', 'release', 'platform')${scope.where}
         GROUP BY k`,
        { project: projectId, keys: groups.flat(), ...aliasParams(aliases), ...scope.params },
      );
      return factsByKey(rows);
    },

    /** The group's distinct users and the id of its latest occurrence (null: none). */
    async usersAndLatest(
      projectId: string,
      keys: string[],
      only: OccurrenceScope,
    ): Promise<{ users: number; latestId: string | null }> {
      const scope = stateScope(only);
      const [r] = await ch.query<{ u: number; n: number; latest: [unknown, unknown, unknown, string] }>(
        `SELECT uniqExactMerge(users) AS u, sum(rows) AS n, argMaxMerge(latest) AS latest
         FROM ${STATE} WHERE ${ONE_GROUP} AND dimension = ''${scope.where}`,
        { project: projectId, keys, ...scope.params },
      );
      if (!r || Number(r.n) === 0) return { users: 0, latestId: null };
      return { users: Number(r.u), latestId: r.latest[3] };
    },

    /**
     * Each value of the dimensions asked for: distinct occurrences (the slices' row counts, and
     * the slices holding a retried report recounted from the occurrences), distinct devices.
     */
    async dimensions(
      projectId: string,
      keys: string[],
      dims: readonly StateDimension[],
      only: OccurrenceScope,
    ): Promise<DimensionCount[]> {
      const scope = stateScope(only);
      const params = { project: projectId, keys, dims: [...dims], ...scope.params };
      const retried = await retriedSlices(projectId, keys, only);
      const inRetried = (day: string) =>
        `has(arrayZip({dd:Array(String)}, {de:Array(String)}, {dl:Array(String)}), (toString(${day}), toString(environment), toString(level)))`;
      const some = retried.dd.length > 0;
      const [counted, recounted] = await Promise.all([
        ch.query<{ dim: StateDimension; v: string; n: number; d: number }>(
          `SELECT dimension AS dim, value AS v, ${some ? `sumIf(rows, NOT ${inRetried('day')})` : 'sum(rows)'} AS n,
             uniqCombinedMerge(14)(value_devices) AS d
           FROM ${STATE} WHERE ${ONE_GROUP} AND dimension IN {dims:Array(String)}${scope.where}
           GROUP BY dim, v`,
          { ...params, ...retried },
        ),
        some
          ? ch.query<{ dim: StateDimension; v: string; n: number }>(
              `SELECT x.1 AS dim, x.2 AS v, uniqExact(id) AS n
               FROM ${OCCURRENCES} ARRAY JOIN ${DIMENSION_VALUES} AS x
               WHERE ${ONE_GROUP}${scope.where} AND ${inRetried("toDate(occurred_at, 'UTC')")} AND dim IN {dims:Array(String)}
               GROUP BY dim, v`,
              { ...params, ...retried },
            )
          : Promise.resolve([]),
      ]);
      const extra = new Map(recounted.map((r) => [`${r.dim}\n${r.v}`, Number(r.n)]));
      return counted.map((r) => ({
        dimension: r.dim,
        value: r.v === '' ? null : r.v,
        occurrences: Number(r.n) + (extra.get(`${r.dim}\n${r.v}`) ?? 0),
        devices: Number(r.d),
      }));
    },

    /** The environments of a group's occurrences, with how many each ('' = sent without one), most first (50). */
    async environments(projectId: string, keys: string[]): Promise<{ environment: string; occurrences: number }[]> {
      const counts = new Map<string, number>();
      for (const x of await slices(projectId, keys, {}))
        counts.set(x.environment, (counts.get(x.environment) ?? 0) + x.ids);
      return [...counts]
        .map(([environment, occurrences]) => ({ environment, occurrences }))
        .filter((x) => x.occurrences > 0)
        .sort(
          (x, y) =>
            y.occurrences - x.occurrences ||
            (x.environment < y.environment ? -1 : x.environment > y.environment ? 1 : 0),
        )
        .slice(0, 50);
    },
  };
}

export type CrashGroupState = ReturnType<typeof crashGroupState>;
