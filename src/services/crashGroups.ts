import { present } from '../lib/invariant.ts';
import { canTransition, type CrashGroupStatus } from '../domain/crashGroupStatus.ts';
import { isoMs, isoTime } from '../lib/time.ts';
import { CRASH_LIST_LEVELS, MESSAGE_LEVELS, type CrashLevel } from '../domain/crashContext.ts';
import { InvalidParameterError, ValidationError } from '../domain/errors.ts';
import { pageEnvelope } from '../domain/paging.ts';
import { CRASH_FIELDS, storageKeys, type CrashGroupsRepo, type GroupRow } from '../repos/crashGroups/index.ts';
import type { OccurrenceScope } from '../repos/crashOccurrences.ts';
import type {
  CrashBreakdown,
  CrashGroupFacts,
  CrashOccurrence,
  CrashOccurrencesRepo,
  OccurrenceFacts,
} from '../repos/crashOccurrences.ts';
import type { SessionsRepo } from '../repos/sessions.ts';
import type { AlertState, OutboxRepo } from '../repos/outbox.ts';
import type { SymbolicationService } from './symbolication.ts';
import type { FrameSource } from '../domain/symbolication/sourceContext.ts';
import { ADMIN_ACTOR, recordHistory, type Actor } from '../repos/crashGroupActivity.ts';

/** The one read model of a crash group; the management API and the dashboard each present it. */
export interface CrashGroup {
  id: string;
  message: string;
  status: CrashGroupStatus;
  isFatal: boolean;
  handled: boolean;
  occurrenceCount: number;
  affectedDevices: number;
  platform: string | null;
  appVersion: string | null;
  osVersion: string | null;
  firstSeenAt: string;
  lastSeenAt: string;
  /** The latest of its creation, a status or summary change, and its latest occurrence's recording (server clock). */
  updatedAt: string;
  stackHead: string;
  summary: string | null;
  summarySource: string | null;
  /** When the summary was written (null before it was, and for summaries older than the column). */
  summaryAt: string | null;
  appVersions: string[];
  resolvedVersions: string[];
  /** every platform seen (`platform` is the latest occurrence's) */
  platforms: string[];
  /** the most severe level of its occurrences (fatal, error, warning, info) */
  level: CrashLevel;
}

/** A crash group as the management API shows it: the read model plus its alert's state. */
export type CrashGroupView = CrashGroup & { alert: AlertState | null };

export type SetStatusResult = { outcome: 'not-found' } | { outcome: 'ok'; group: CrashGroup };

export type MergeGroupsResult = { outcome: 'not-found' } | { outcome: 'ok'; group: CrashGroup; merged: string[] };

export type { CrashBreakdown, CrashGroupFacts, CrashOccurrence };

/**
 * The crash list's filters and order (the dashboard): fatal crashes or non-fatal errors, or
 * messages; by a counter or a time, descending. Counts are of the occurrences of the levels
 * shown (crashes and errors unless `kind` is message or `levels` says otherwise) and of the
 * environment when one is given; a group with none of those is not listed.
 */
export interface CrashListOptions {
  kind?: 'fatal' | 'nonfatal' | 'message';
  sort?: 'lastSeen' | 'firstSeen' | 'occurrences' | 'users';
  levels?: readonly CrashLevel[];
  environment?: string;
  /** only the occurrences with this tag (a chip of the crash page) */
  tag?: { key: string; value: string };
  /** a substring of the message (its type included) or of the stack's head (functions, files), any case */
  search?: string;
}

/** The levels a crash list shows: messages only when asked for. */
export function listLevels(o: Pick<CrashListOptions, 'kind' | 'levels'>): readonly CrashLevel[] {
  if (o.levels && o.levels.length > 0) return o.levels;
  return o.kind === 'message' ? MESSAGE_LEVELS : CRASH_LIST_LEVELS;
}

/** How deep the crash list pages (a bounded offset over an index); past it, a filter or a search narrows it. */
export const MAX_LIST_OFFSET = 10_000;

/** The counters a list's levels are kept in: the crashes' (0) or the messages' (1); none for other sets. */
function classOf(levels: readonly CrashLevel[]): 0 | 1 | undefined {
  const same = (a: readonly CrashLevel[]) => a.length === levels.length && a.every((l) => levels.includes(l));
  return same(CRASH_LIST_LEVELS) ? 0 : same(MESSAGE_LEVELS) ? 1 : undefined;
}

const SORT_KEY = {
  lastSeen: (g: CrashGroup & { usersAffected: number }) => g.lastSeenAt,
  firstSeen: (g: CrashGroup & { usersAffected: number }) => g.firstSeenAt,
  occurrences: (g: CrashGroup & { usersAffected: number }) => g.occurrenceCount,
  users: (g: CrashGroup & { usersAffected: number }) => g.usersAffected,
} as const;

/**
 * The merge of both stores. A group whose first occurrence is being written (its Postgres row
 * committed a moment before the ClickHouse block is readable, or the other way round on a
 * retry) shows the first occurrence's own values rather than zeros.
 */
function toGroup(r: GroupRow, f: OccurrenceFacts | undefined): CrashGroup {
  return {
    id: r.id,
    message: r.message,
    status: r.status,
    isFatal: f ? f.isFatal : r.is_fatal,
    handled: f ? f.handled : r.handled,
    occurrenceCount: f ? f.occurrences : 1,
    affectedDevices: f ? f.devices : 1,
    platform: f ? f.latest[0] : r.platform,
    appVersion: f ? f.latest[1] : r.app_version,
    osVersion: f ? f.latest[2] : r.os_version,
    firstSeenAt: isoMs(Math.min(Number(r.first_seen_at), f?.firstSeen ?? Infinity)),
    lastSeenAt: isoMs(f ? f.lastSeen : r.first_seen_at),
    updatedAt: isoMs(r.updated_at),
    stackHead: r.stack_head,
    summary: r.summary,
    summarySource: r.summary_source,
    summaryAt: isoTime(r.summary_at),
    appVersions: f ? f.versions : r.app_version === null ? [] : [r.app_version],
    resolvedVersions: r.resolved_versions,
    platforms: f ? f.platforms : r.platform === null ? [] : [r.platform],
    level: f ? f.level : r.is_fatal ? 'fatal' : 'error',
  };
}

/**
 * The export row: the contract's crash-group fields in its order, then `updatedAt` and
 * `mergedInto` (set only on a merged group's last row, which only a change window returns).
 */
function exportFields(g: CrashGroup, row: GroupRow) {
  const all: Record<string, unknown> = { ...g, mergedInto: row.merged_into };
  return Object.fromEntries(CRASH_FIELDS.map((k) => [k, all[k]]));
}

export interface CrashGroupsDeps {
  groups: CrashGroupsRepo;
  occurrences: CrashOccurrencesRepo;
  sessions: SessionsRepo;
  outbox: OutboxRepo;
  /** Reads stacks with the release's uploaded source maps / R8 mappings (absent: stacks stay raw). */
  symbols?: Pick<SymbolicationService, 'symbolicate'> & Partial<Pick<SymbolicationService, 'sourceContext'>>;
  /** A merge moved occurrences into a group: its updatedAt moves (coalesced, services/index.ts). */
  touched?: (projectId: string, groupId: string) => void;
}

/** An occurrence's stack as stored, to be read with its release's artifacts. */
type StackSource = {
  sessionId: string;
  appVersion: string | null;
  stackTrace: string | null;
  symbolicatedStack: string | null;
  message: string | null;
};

/** The readable stack and the artifacts that could not be parsed to make it. */
type StackReading = { stack: string | null; unreadableArtifacts: string[] };

/** Who moves a group by hand: the management API's token or a dashboard account (repos/crashGroupActivity.ts). */
export type { Actor };
export { ADMIN_ACTOR };

/**
 * The crash workflow by hand (status changes, merges) and the group's read model over both
 * stores (identity and workflow in Postgres, occurrences in ClickHouse). Recording occurrences
 * (grouping, first occurrences, reopening, the sessions' flags) is src/pipeline/recordCrashes/.
 */
export function crashGroupsService(d: CrashGroupsDeps) {
  const { groups, occurrences } = d;

  async function withFacts(projectId: string, rows: GroupRow[]): Promise<CrashGroup[]> {
    const facts = await occurrences.factsOf(projectId, rows.map(storageKeys));
    return rows.map((r) => toGroup(r, facts.get(r.group_key)));
  }

  async function get(projectId: string, groupId: string): Promise<CrashGroup | null> {
    const row = await groups.row(projectId, groupId);
    return row ? ((await withFacts(projectId, [row]))[0] ?? null) : null;
  }

  async function stackReading(projectId: string, o: StackSource): Promise<StackReading> {
    if (d.symbols && o.stackTrace) {
      const build = (await d.sessions.forCrash(projectId, o.sessionId))?.app_build_number ?? null;
      const r = await d.symbols.symbolicate(projectId, o.appVersion, build, o.stackTrace, o.message ?? '');
      if (r.mapped > 0) return { stack: r.stack, unreadableArtifacts: r.unreadable ?? [] };
      return { stack: o.symbolicatedStack, unreadableArtifacts: r.unreadable ?? [] };
    }
    return { stack: o.symbolicatedStack, unreadableArtifacts: [] };
  }

  async function withAlert(g: CrashGroup): Promise<CrashGroupView> {
    return { ...g, alert: await d.outbox.alertOf(g.id) };
  }

  /**
   * The list cut after reading every group of the project (an environment's or a tag's counts,
   * or levels the counters do not keep): the project's groups from Postgres, their facts in one
   * ClickHouse query, filtered, sorted and paged here.
   */
  async function listScanned(
    projectId: string,
    status: CrashGroupStatus | undefined,
    page: number,
    limit: number,
    opts: CrashListOptions,
  ) {
    const rows = await groups.rows(projectId, status);
    const levels = listLevels(opts);
    const only = { levels, environment: opts.environment, tag: opts.tag };
    const facts = await occurrences.factsOf(projectId, rows.map(storageKeys), only);
    const key = SORT_KEY[opts.sort ?? 'lastSeen'];
    // A group whose first occurrence is not readable yet is listed from its own row, when its
    // default level is shown and no environment is asked for; one with occurrences, none of
    // them of the levels or environment asked for, is not.
    const unread =
      opts.environment === undefined && opts.tag === undefined
        ? await occurrences.withoutOccurrences(
            projectId,
            rows.map((r) => r.group_key).filter((k) => !facts.has(k)),
          )
        : new Set<string>();
    const shown = (r: GroupRow) =>
      facts.has(r.group_key) || (unread.has(r.group_key) && levels.includes(r.is_fatal ? 'fatal' : 'error'));
    const search = opts.search?.trim().toLowerCase();
    const all = rows
      .filter(shown)
      .filter((r) => !search || `${r.message} ${r.stack_head}`.toLowerCase().includes(search))
      .map((r) => ({ ...toGroup(r, facts.get(r.group_key)), usersAffected: facts.get(r.group_key)?.users ?? 0 }))
      .filter((g) => opts.kind === undefined || opts.kind === 'message' || g.isFatal === (opts.kind === 'fatal'))
      .sort((a, b) => {
        const x = key(a);
        const y = key(b);
        return x < y ? 1 : x > y ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
      });
    return {
      ...pageEnvelope(all.slice((page - 1) * limit, page * limit), all.length, page, limit),
      totalCapped: false,
    };
  }

  /** Projects whose groups all have their counters (this process has checked). */
  const counted = new Set<string>();

  /**
   * Groups made before the counters were kept (postgres/018) are counted from their
   * occurrences in ClickHouse the first time their project's list is read, a thousand at a time.
   */
  async function countOlderGroups(projectId: string): Promise<void> {
    if (counted.has(projectId)) return;
    for (;;) {
      const rows = await groups.uncounted(projectId, 1000);
      if (rows.length === 0) break;
      const keys = rows.map(storageKeys);
      const [crash, message] = await Promise.all([
        occurrences.factsOf(projectId, keys, { levels: CRASH_LIST_LEVELS }),
        occurrences.factsOf(projectId, keys, { levels: MESSAGE_LEVELS }),
      ]);
      const fatal = await occurrences.factsOf(projectId, keys, { levels: ['fatal'] });
      await groups.setCounted(
        rows.map((r) => {
          const c = crash.get(r.group_key);
          const m = message.get(r.group_key);
          // A group none of whose occurrences is readable (written before ClickHouse held them):
          // its first occurrence, as its own row says.
          const none = !c && !m;
          return {
            id: r.id,
            crash: c?.occurrences ?? (none ? 1 : 0),
            fatal: fatal.get(r.group_key)?.occurrences ?? (none && r.is_fatal ? 1 : 0),
            crashUsers: c?.users ?? 0,
            crashLast: c?.lastSeen ?? (none ? Number(r.first_seen_at) : null),
            message: m?.occurrences ?? 0,
            messageUsers: m?.users ?? 0,
            messageLast: m?.lastSeen ?? null,
          };
        }),
      );
    }
    counted.add(projectId);
  }

  return {
    get,
    withAlert,

    async view(projectId: string, groupId: string): Promise<CrashGroupView | null> {
      // The alert's state first: a job seen done has stored its summary, so the group read
      // afterwards shows it (the group's read spans both stores and takes a while).
      const alert = await d.outbox.alertOf(groupId);
      const g = await get(projectId, groupId);
      return g ? { ...g, alert } : null;
    },

    /**
     * Most recently seen first (or another order), filtered, sorted and cut in Postgres on the
     * groups' counters (repos/crashGroups/list.ts listPage; docs/decisions.md, "The paged crash
     * list"); the page's figures are then read from ClickHouse for its groups alone. Counts of
     * one environment or tag, or of levels other than the crashes' or the messages', exist only
     * in ClickHouse: those lists are still cut after reading every group (listScanned).
     */
    async list(
      projectId: string,
      status: CrashGroupStatus | undefined,
      page: number,
      limit: number,
      opts: CrashListOptions = {},
    ) {
      const levels = listLevels(opts);
      const cls = classOf(levels);
      const fatal = opts.kind === 'fatal' ? true : opts.kind === 'nonfatal' ? false : undefined;
      const scanned =
        opts.environment !== undefined ||
        opts.tag !== undefined ||
        cls === undefined ||
        (cls === 1 && fatal !== undefined);
      if (scanned) return listScanned(projectId, status, page, limit, opts);
      const offset = (page - 1) * limit;
      if (offset >= MAX_LIST_OFFSET) {
        throw new InvalidParameterError(
          `The crash list pages through its first ${MAX_LIST_OFFSET} groups; narrow it with a filter or a search`,
          'page',
        );
      }
      await countOlderGroups(projectId);
      const search = opts.search?.trim() || undefined;
      const sort = opts.sort ?? 'lastSeen';
      // Counted a thousand groups past the page (and one), up to the list's depth: a filter no
      // index orders by (fatal, a common search) then reads thousands of rows, not the project's.
      const shownUpTo = Math.min(MAX_LIST_OFFSET, (Math.floor(offset / 1000) + 2) * 1000);
      const countUpTo = shownUpTo + 1;
      const r = await groups.listPage(projectId, { status, cls, fatal, sort, search, offset, limit, countUpTo });
      const facts = await occurrences.factsOf(projectId, r.rows.map(storageKeys), { levels });
      const data = r.rows.map((row) => {
        const f = facts.get(row.group_key);
        return { ...toGroup(row, f), usersAffected: f?.users ?? Number(row.users) };
      });
      // `totalCapped`: there are more than `total` groups (counted further as the reader pages on).
      const capped = r.total > shownUpTo;
      return { ...pageEnvelope(data, capped ? shownUpTo : r.total, page, limit), totalCapped: capped };
    },

    /** The crash page's facts of one group: distinct users, occurrences per app version, the latest occurrence whole. */
    async facts(projectId: string, groupId: string, only: OccurrenceScope = {}): Promise<CrashGroupFacts> {
      const row = await groups.row(projectId, groupId);
      if (!row) return { usersAffected: 0, appVersionCounts: [], latest: null };
      return occurrences.pageFacts(projectId, storageKeys(row), only);
    },

    /** Who the group hit: platforms, device models, OS versions and app versions, each with its devices and occurrences. */
    async breakdown(projectId: string, groupId: string, only: OccurrenceScope = {}): Promise<CrashBreakdown | null> {
      const row = await groups.row(projectId, groupId);
      return row ? occurrences.breakdown(projectId, storageKeys(row), only) : null;
    },

    /** The environments of a group's occurrences, with how many each ('' = sent without one). */
    async environments(projectId: string, groupId: string): Promise<{ environment: string; occurrences: number }[]> {
      const row = await groups.row(projectId, groupId);
      return row ? occurrences.environments(projectId, storageKeys(row)) : [];
    },

    /**
     * An occurrence's stack as its release's artifacts read it now: a mapping uploaded after the
     * crash shows here (parsed maps are cached); the group keeps the key it was given. Falls
     * back on the stack symbolicated at record time; null when neither maps anything.
     */
    async readableStack(projectId: string, o: StackSource): Promise<string | null> {
      return (await stackReading(projectId, o)).stack;
    },

    /** The group's `index`-th occurrence, newest first, whole with its context (null: no group). */
    async occurrenceAt(projectId: string, groupId: string, index: number, only: OccurrenceScope = {}) {
      const row = await groups.row(projectId, groupId);
      return row ? occurrences.occurrenceAt(projectId, storageKeys(row), index, only) : null;
    },

    /** Source lines around the frames of an occurrence's stack that its release's source maps map. */
    async sourceLines(
      projectId: string,
      o: { sessionId: string; appVersion: string | null; stackTrace: string },
    ): Promise<FrameSource[]> {
      if (!d.symbols?.sourceContext) return [];
      const session = await d.sessions.forCrash(projectId, o.sessionId);
      return d.symbols.sourceContext(projectId, o.appVersion, session?.app_build_number ?? null, o.stackTrace);
    },

    /** The readable stack, and the release's artifacts that could not be parsed to make it (the crash page says so). */
    stackReading,

    /** The group's occurrences, newest first, each with the session it happened in. */
    async occurrences(projectId: string, groupId: string, page: number, limit: number, only: OccurrenceScope = {}) {
      const row = await groups.row(projectId, groupId);
      if (!row) return pageEnvelope<CrashOccurrence>([], 0, page, limit);
      return occurrences.page(projectId, storageKeys(row), page, limit, only);
    },

    /**
     * A status change by hand: any move (src/domain/crashGroupStatus.ts). Resolving snapshots
     * the versions seen so far (from the occurrences): a later occurrence from one of them
     * leaves the group resolved, one from a new version reopens it. Setting the status a group
     * already has changes nothing (safe to retry).
     */
    async setStatus(
      projectId: string,
      groupId: string,
      to: CrashGroupStatus,
      actor: Actor = ADMIN_ACTOR,
    ): Promise<SetStatusResult> {
      const r = await groups.updateStatus(
        projectId,
        groupId,
        async (row) => {
          if (!canTransition(row.status, to)) return null;
          return {
            status: to,
            resolvedVersions: to === 'resolved' ? await occurrences.versionsOf(projectId, storageKeys(row)) : null,
          };
        },
        (q, from, _to, id) =>
          recordHistory(q, { projectId, groupId: id, kind: 'status', fromStatus: from, toStatus: to, actor }),
      );
      if (r.outcome === 'not-found') return r;
      const [group] = await withFacts(projectId, [r.row]);
      if (!group) throw new Error(`crash group ${groupId} lost its read model`);
      return { outcome: 'ok', group };
    },

    /**
     * A person merges groups into the one they keep (docs/decisions.md, "Merging crash groups"):
     * the merged groups' keys lead to the kept group from now on (a crash of theirs is an
     * occurrence of it, never a new group, so no alert fires), their occurrences count in it
     * (reads take the merged groups' keys), and their history and comments join it. Ids of
     * groups already part of the kept one change nothing; an unknown id is a 422 and changes nothing.
     */
    async merge(
      projectId: string,
      groupId: string,
      groupIds: string[],
      actor: Actor = ADMIN_ACTOR,
    ): Promise<MergeGroupsResult> {
      const r = await groups.merge(projectId, groupId, groupIds, (q, keptId, mergedIds) =>
        recordHistory(q, {
          projectId,
          groupId: keptId,
          kind: 'merge',
          actor,
          detail: mergedIds.join(', '),
        }),
      );
      if (r.outcome === 'not-found') return r;
      if (r.outcome === 'unknown') {
        throw new ValidationError(
          groupIds.flatMap((id, i) =>
            r.missing.includes(id) ? [{ path: `/groupIds/${i}`, message: 'no such crash group in this project' }] : [],
          ),
        );
      }
      if (r.merged.length) d.touched?.(projectId, r.keptId);
      const group = await get(projectId, r.keptId);
      if (!group) throw new Error(`crash group ${r.keptId} lost its read model`);
      return { outcome: 'ok', group, merged: r.merged };
    },

    /** The session's crashes with their group, where they happened on the timeline. */
    async ofSession(projectId: string, sessionId: string) {
      const occ = await occurrences.ofSession(projectId, sessionId);
      const rows = await groups.byKeys(projectId, [...new Set(occ.map((o) => o.groupKey))]);
      const byKey = new Map(rows.map((x) => [x.group_key, x]));
      return occ.map((o) => {
        const x = byKey.get(o.groupKey);
        return {
          occurredAt: isoMs(o.at),
          isFatal: o.isFatal,
          groupId: x?.id ?? null,
          message: x?.message ?? null,
          groupStatus: x?.status ?? null,
        };
      });
    },

    /** The group keys whose occurrences are the group's (none: no such group). */
    async keysOf(projectId: string, groupId: string): Promise<string[]> {
      const row = await groups.row(projectId, groupId);
      return row ? [row.group_key] : [];
    },

    /** The crash-group export: each page's counters come from ClickHouse. */
    export: groups.exportResource(async (projectId, rows) =>
      (await withFacts(projectId, rows)).map((g, i) => exportFields(g, present(rows[i], `export row ${i}`))),
    ),

    /** Moves the updatedAt of groups that had new occurrences. */
    touch: groups.touch,
    /** Resolves once every occurrence accepted so far is written (shutdown, tests). */
    drain: occurrences.drain,
    /** The occurrences' group commit (measured). */
    batcher: occurrences.batcher,
  };
}

export type CrashGroupsService = ReturnType<typeof crashGroupsService>;
