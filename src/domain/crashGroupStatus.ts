export const CRASH_GROUP_STATUSES = ['open', 'acknowledged', 'resolved', 'ignored'] as const;
export type CrashGroupStatus = (typeof CRASH_GROUP_STATUSES)[number];

// docs/decisions.md (Crashes): a person may move a group between any two statuses by hand
// (open → resolved directly, as in Sentry and Crashlytics); the only rule the workflow keeps
// is the automatic reopening below. Setting the status a group already has changes nothing.

/** The statuses a person can move a group to from `from` (every other one). */
export function allowedTransitions(from: CrashGroupStatus): CrashGroupStatus[] {
  return CRASH_GROUP_STATUSES.filter((s) => s !== from);
}

/** Any manual move is allowed; staying put is a no-op, not a transition. */
export function canTransition(from: CrashGroupStatus, to: CrashGroupStatus): boolean {
  return from !== to && (CRASH_GROUP_STATUSES as readonly string[]).includes(to);
}

/**
 * A new occurrence reopens a resolved group only when it comes from an app version that had
 * not had this crash before the group was resolved (old builds in the field do not reopen it).
 */
export function statusAfterOccurrence(
  current: CrashGroupStatus,
  appVersion: string | null,
  versionsBeforeResolve: readonly string[],
): CrashGroupStatus {
  if (current !== 'resolved') return current;
  if (appVersion === null) return current;
  return versionsBeforeResolve.includes(appVersion) ? current : 'open';
}
