import { allowedTransitions, type CrashGroupStatus } from '../domain/crashGroupStatus.ts';
import { summaryView } from '../domain/crashSummary.ts';
import { stackHead } from '../domain/crashGrouping.ts';
import { stackFrames } from '../domain/grouping/groupKey.ts';
import { parseIsoDate } from '../domain/exportParams.ts';
import { DAY_MS, utcDayStart } from '../lib/time.ts';
import { InvalidParameterError, NotFoundError } from '../domain/errors.ts';
import { isFailedNetworkEvent } from '../domain/sessionState.ts';
import type {
  Actor,
  CrashBreakdown,
  CrashGroup,
  CrashGroupFacts,
  CrashGroupsService,
  CrashListOptions,
} from './crashGroups.ts';
import type { SessionListFilter, SessionsRepo } from '../repos/sessions.ts';
import type { EventsRepo } from '../repos/events.ts';
import type { NetworkLogsRepo } from '../repos/networkLogs.ts';
import type { OccurrenceScope } from '../repos/crashOccurrences.ts';
import { crashTimeline } from '../domain/crashTimeline.ts';

/** The session events a crash's timeline shows at most (the breadcrumbs are bounded at ingest). */
const TIMELINE_EVENTS = 100;

/** The dashboard's shape of a crash group: the workflow's next steps instead of the alert. */
export const dashboardGroup = (g: CrashGroup & { usersAffected?: number }) => ({
  id: g.id,
  message: g.message,
  status: g.status,
  isFatal: g.isFatal,
  handled: g.handled,
  occurrenceCount: g.occurrenceCount,
  affectedDevices: g.affectedDevices,
  usersAffected: g.usersAffected ?? null,
  platform: g.platform,
  appVersion: g.appVersion,
  osVersion: g.osVersion,
  firstSeenAt: g.firstSeenAt,
  lastSeenAt: g.lastSeenAt,
  stackHead: g.stackHead,
  allowedTransitions: allowedTransitions(g.status),
  appVersions: g.appVersions,
  platforms: g.platforms,
  summarySource: g.summarySource,
  level: g.level,
});

/**
 * The crash page: the group, who and what it hit (by platform, model, OS and app version), its
 * latest occurrence whole (raw, and as the release's artifacts read it), a summary that agrees with it.
 */
type CrashPageExtra = {
  breakdown: CrashBreakdown | null;
  readableStack: string | null;
  unreadableArtifacts: string[];
  inAppPackages: string[];
};

function crashPage(g: CrashGroup, f: CrashGroupFacts, extra: CrashPageExtra) {
  const latest = f.latest;
  const summary = summaryView(g, {
    // a map uploaded after the crash makes the fallback summary name the original frames too
    message: g.message,
    stackHead: extra.readableStack ? stackHead(extra.readableStack) : g.stackHead,
    isFatal: g.isFatal,
    handled: g.handled,
    platform: g.platform,
    osVersion: g.osVersion,
    appVersion: g.appVersion,
    appBuildNumber: null,
    deviceBrand: latest?.brand ?? null,
    deviceModel: latest?.model ?? null,
  });
  return {
    ...dashboardGroup({ ...g, usersAffected: f.usersAffected }),
    appVersionCounts: f.appVersionCounts,
    breakdown: extra.breakdown,
    latest: latest && {
      ...latest,
      // Occurrences stored before whole traces were kept have only the group's head.
      stackTrace: latest.stackTrace ?? g.stackHead,
      stackTraceComplete: latest.stackTrace !== null,
      // null: the release has no artifact that maps this stack (the raw one is what there is)
      symbolicatedStack: extra.readableStack,
      // Each line with its parsed frame (module, function, line, column, inApp), as the group key reads it.
      frames: stackFrames(latest.stackTrace ?? g.stackHead, extra.inAppPackages),
      symbolicatedFrames: extra.readableStack === null ? null : stackFrames(extra.readableStack, extra.inAppPackages),
      // the release's artifacts this stack needed that could not be parsed (its frames stay raw)
      unreadableArtifacts: extra.unreadableArtifacts,
    },
    summary,
  };
}

/**
 * A query date: an ISO 8601 date or date-time (the export's strict parser); a date-only upper
 * bound includes that whole UTC day, a date-time one is exclusive.
 */
export function dateBound(name: string, v: string | undefined, upper: boolean): number | undefined {
  if (v === undefined || v === '') return undefined;
  const d = parseIsoDate(name, v);
  return d.dateOnly && upper ? d.ms + DAY_MS : d.ms;
}

export type SessionListQuery = Omit<SessionListFilter, 'from' | 'to'> & { from?: string; to?: string };

/**
 * The dashboard's reads (project-scoped; the caller checks access through the projects
 * service). Each goes to the owner of its table; this only presents and combines them.
 */
export function dashboardService(d: {
  sessions: SessionsRepo;
  crashGroups: CrashGroupsService;
  events: EventsRepo;
  networkLogs: NetworkLogsRepo;
  /** The project's own packages, shown as app frames (absent: none). */
  inAppPackagesOf?: (projectId: string) => Promise<string[]>;
}) {
  async function page(projectId: string, g: CrashGroup, only: OccurrenceScope = {}) {
    // Independent reads, asked for at once (a server runs them side by side).
    const [f, breakdown, environments, inAppPackages] = await Promise.all([
      d.crashGroups.facts(projectId, g.id, only),
      d.crashGroups.breakdown(projectId, g.id, only),
      d.crashGroups.environments(projectId, g.id),
      d.inAppPackagesOf?.(projectId) ?? Promise.resolve([] as string[]),
    ]);
    const none = { stack: null, unreadableArtifacts: [] };
    const reading = f.latest ? await d.crashGroups.stackReading(projectId, f.latest) : none;
    const { stack: readableStack, unreadableArtifacts } = reading;
    return {
      ...crashPage(g, f, { breakdown, readableStack, unreadableArtifacts, inAppPackages }),
      environments,
      environment: only.environment ?? null,
    };
  }

  return {
    sessions(projectId: string, q: SessionListQuery) {
      const from = dateBound('from', q.from, false);
      const to = dateBound('to', q.to, true);
      if (from !== undefined && to !== undefined && from >= to)
        throw new InvalidParameterError('The start date must be before the end date');
      return d.sessions.list(projectId, { ...q, from, to });
    },
    sessionFacets: d.sessions.facets,

    async session(projectId: string, sessionId: string) {
      const session = await d.sessions.get(projectId, sessionId);
      if (!session) throw new NotFoundError('Session not found');
      return { session, crashes: await d.crashGroups.ofSession(projectId, sessionId) };
    },

    /** A session's events in sequence order; a network event carries the failed-request verdict (`failed`). */
    async events(projectId: string, sessionId: string, afterSeq: number | undefined, limit: number) {
      const page = await d.events.timeline(projectId, sessionId, afterSeq, limit);
      return {
        ...page,
        data: page.data.map((e) => (e.type === 'network' ? { ...e, failed: isFailedNetworkEvent(e.data) } : e)),
      };
    },
    network: d.networkLogs.forSession,

    /** Sessions per UTC day; the last 30 days by default, at most 366. */
    daily(projectId: string, fromText: string | undefined, toText: string | undefined) {
      const to = dateBound('to', toText, true) ?? utcDayStart(Date.now()) + DAY_MS;
      const from = dateBound('from', fromText, false) ?? to - 30 * DAY_MS;
      if (from >= to) throw new InvalidParameterError('The start date must be before the end date');
      if (to - from > 366 * DAY_MS) throw new InvalidParameterError('The chart covers at most 366 days');
      return d.sessions.daily(projectId, from, to);
    },

    async crashGroups(
      projectId: string,
      status: CrashGroupStatus | undefined,
      page: number,
      limit: number,
      opts: CrashListOptions = {},
    ) {
      const r = await d.crashGroups.list(projectId, status, page, limit, opts);
      return { ...r, data: r.data.map(dashboardGroup) };
    },

    async crashGroup(projectId: string, groupId: string, only: OccurrenceScope = {}) {
      const g = await d.crashGroups.get(projectId, groupId);
      if (!g) throw new NotFoundError('Crash group not found');
      return page(projectId, g, only);
    },

    /**
     * One occurrence of a group whole (0: the latest; the page's previous/next), with its crash
     * context, its one timeline (the report's breadcrumbs and the session's events before the
     * crash, the crash last) and the source lines around its mapped frames.
     */
    async occurrence(projectId: string, groupId: string, index: number, only: OccurrenceScope = {}) {
      const r = await d.crashGroups.occurrenceAt(projectId, groupId, index, only);
      if (!r) throw new NotFoundError('Crash group not found');
      const o = r.occurrence;
      if (!o) return { index, total: r.total, occurrence: null, timeline: [], source: [] };
      const at = Date.parse(o.occurredAt);
      const events = await d.events.before(projectId, o.sessionId, at, TIMELINE_EVENTS);
      return {
        index,
        total: r.total,
        occurrence: o,
        timeline: crashTimeline(o.breadcrumbs, events, { at, message: o.message ?? '', level: o.level }),
        source: await d.crashGroups.sourceLines(projectId, o),
      };
    },

    async occurrences(projectId: string, groupId: string, page: number, limit: number, only: OccurrenceScope = {}) {
      if (!(await d.crashGroups.get(projectId, groupId))) throw new NotFoundError('Crash group not found');
      return d.crashGroups.occurrences(projectId, groupId, page, limit, only);
    },

    /** Any manual move (the one workflow, shared with the management API); answers the crash page. */
    async setStatus(projectId: string, groupId: string, status: CrashGroupStatus, actor: Actor) {
      const r = await d.crashGroups.setStatus(projectId, groupId, status, actor);
      if (r.outcome === 'not-found') throw new NotFoundError('Crash group not found');
      return page(projectId, r.group);
    },

    /** Merges groups into this one (services/crashGroups.ts); answers with the kept group's page. */
    async mergeGroups(projectId: string, groupId: string, groupIds: string[], actor: Actor) {
      const r = await d.crashGroups.merge(projectId, groupId, groupIds, actor);
      if (r.outcome === 'not-found') throw new NotFoundError('Crash group not found');
      return page(projectId, r.group);
    },
  };
}
