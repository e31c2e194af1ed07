import { allowedTransitions } from '../domain/crashGroupStatus.ts';
import type { CrashGroup, CrashGroupsRepo } from '../repos/crashGroups.ts';
import type { SessionsRepo } from '../repos/sessions.ts';
import type { EventsRepo } from '../repos/events.ts';
import type { NetworkLogsRepo } from '../repos/networkLogs.ts';

/** The dashboard's shape of a crash group: the workflow's next steps instead of the alert. */
export const dashboardGroup = (g: CrashGroup) => ({
  id: g.id,
  message: g.message,
  status: g.status,
  isFatal: g.isFatal,
  handled: g.handled,
  occurrenceCount: g.occurrenceCount,
  affectedDevices: g.affectedDevices,
  platform: g.platform,
  appVersion: g.appVersion,
  osVersion: g.osVersion,
  firstSeenAt: g.firstSeenAt,
  lastSeenAt: g.lastSeenAt,
  stackHead: g.stackHead,
  allowedTransitions: allowedTransitions(g.status),
  appVersions: g.appVersions,
  summary: g.summary,
  summarySource: g.summarySource,
});

/**
 * The dashboard's reads (project-scoped; access is checked by the caller). Each goes to the
 * owner of its table; this only presents and combines them.
 */
export function dashboardService(d: { sessions: SessionsRepo; crashGroups: CrashGroupsRepo; events: EventsRepo; networkLogs: NetworkLogsRepo }) {
  return {
    sessions: d.sessions.list,
    session: d.sessions.get,
    sessionCrashes: d.crashGroups.ofSession,
    events: d.events.timeline,
    network: d.networkLogs.forSession,
    daily: d.sessions.daily,

    async crashGroups(projectId: string, status: string | undefined, page: number, limit: number) {
      const r = await d.crashGroups.list(projectId, status, page, limit);
      return { ...r, data: r.data.map(dashboardGroup) };
    },

    async crashGroup(projectId: string, groupId: string) {
      const g = await d.crashGroups.get(projectId, groupId);
      return g ? dashboardGroup(g) : null;
    },
  };
}

export type DashboardService = ReturnType<typeof dashboardService>;
