/** The crash groups' Postgres side as the rest of the code imports it (README: one module a job behind it). */
export { CRASH_FIELDS, CRASH_PARQUET, storageKeys, type GroupRow, type GroupState } from './rows.ts';
export {
  addKeys,
  createGroups,
  keyInProject,
  moveFirstSeenMany,
  reopenIn,
  statesByKeys,
  type NewGroup,
  type NewGroupOf,
} from './record.ts';
export {
  countersOf,
  countOccurrences,
  PrecountedStaleError,
  pruneLedger,
  type CountedOccurrence,
  type GroupCounters,
} from './counters.ts';
export { crashGroupAlerts, type AlertFacts } from './alerts.ts';
export { likeLiteral, type ListedRow, type ListQuery } from './list.ts';
export { crashGroupsRepo, type CrashGroupsRepo, type MergeResult, type UpdateStatusResult } from './repo.ts';
