import { mostSevere, type CrashLevel } from '../domain/crashContext.ts';

/** A group's aggregate over its occurrences. */
export interface OccurrenceFacts {
  occurrences: number;
  devices: number;
  /** distinct user ids (occurrences without one do not count) */
  users: number;
  firstSeen: number;
  lastSeen: number;
  /** platform, appVersion, osVersion of the latest occurrence */
  latest: [string | null, string | null, string | null];
  isFatal: boolean;
  handled: boolean;
  versions: string[];
  /** every platform the group was seen on */
  platforms: string[];
  /** the most severe level among the occurrences counted */
  level: CrashLevel;
}

/** A group's facts as the occurrence and the state reads select them (`k` the group's key). */
export interface FactsRow {
  k: string;
  n: number;
  d: number;
  u: number;
  first: number;
  last: number;
  /** platform, appVersion, osVersion (the state's argMax adds the occurrence id) */
  latest: [string | null, string | null, string | null, ...unknown[]];
  fatal: boolean | number;
  handled: boolean | number;
  versions: string[];
  platforms: string[];
  levels: string[];
}

/** The facts of each row, by group key. */
export function factsByKey(rows: FactsRow[]): Map<string, OccurrenceFacts> {
  return new Map(
    rows.map((r) => [
      r.k,
      {
        occurrences: Number(r.n),
        devices: Number(r.d),
        users: Number(r.u),
        firstSeen: Number(r.first),
        lastSeen: Number(r.last),
        latest: [r.latest[0], r.latest[1], r.latest[2]],
        isFatal: Boolean(Number(r.fatal)),
        handled: Boolean(Number(r.handled)),
        versions: r.versions,
        platforms: r.platforms,
        level: mostSevere(r.levels),
      },
    ]),
  );
}
