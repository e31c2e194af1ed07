export const CRASH_GROUP_STATUSES = ['open', 'acknowledged', 'resolved', 'ignored'] as const;
export type CrashGroupStatus = (typeof CRASH_GROUP_STATUSES)[number];

// docs/decisions.md: open -> acknowledged -> resolved; any -> ignored; ignored or resolved -> open by hand.
const ALLOWED: Record<CrashGroupStatus, CrashGroupStatus[]> = {
  open: ['acknowledged', 'ignored'],
  acknowledged: ['resolved', 'ignored'],
  resolved: ['open', 'ignored'],
  ignored: ['open'],
};

export function allowedTransitions(from: CrashGroupStatus): CrashGroupStatus[] {
  return ALLOWED[from];
}

export function canTransition(from: CrashGroupStatus, to: CrashGroupStatus): boolean {
  return ALLOWED[from].includes(to);
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
