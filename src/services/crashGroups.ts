import type { CrashGroup, CrashGroupsRepo } from '../repos/crashGroups.ts';
import type { AlertState, OutboxRepo } from '../repos/outbox.ts';

/** A crash group as the management API shows it: the read model plus its alert's state. */
export type CrashGroupView = CrashGroup & { alert: AlertState | null };

export function crashGroupsService(groups: CrashGroupsRepo, outbox: OutboxRepo) {
  const withAlert = async (g: CrashGroup): Promise<CrashGroupView> => ({ ...g, alert: await outbox.alertOf(g.id) });
  return {
    repo: groups,

    async view(projectId: string, groupId: string): Promise<CrashGroupView | null> {
      // The alert's state first: a job seen done has stored its summary, so the group read
      // afterwards shows it (the group's read spans both stores and takes a while).
      const alert = await outbox.alertOf(groupId);
      const g = await groups.get(projectId, groupId);
      return g ? { ...g, alert } : null;
    },

    setStatus: groups.setStatus,
    withAlert,
  };
}

export type CrashGroupsService = ReturnType<typeof crashGroupsService>;
