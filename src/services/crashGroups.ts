import {
  crashGroupKey,
  crashOccurrenceId,
  GROUP_RULE_VERSION,
  LEGACY_RULE_VERSION,
  legacyGroupKey,
  stackHead,
  type CrashPayload,
} from '../domain/crashGrouping.ts';
import { canTransition, statusAfterOccurrence, type CrashGroupStatus } from '../domain/crashGroupStatus.ts';
import { isoMs, isoTime } from '../lib/time.ts';
import {
  boundCrashContext,
  CRASH_LIST_LEVELS,
  isMessageLevel,
  MESSAGE_LEVELS,
  type CrashLevel,
  type RawCrashContext,
} from '../domain/crashContext.ts';
import { ValidationError } from '../domain/errors.ts';
import {
  fingerprintInput,
  fingerprintKey,
  firstMatchingRule,
  type FingerprintRuleSpec,
} from '../domain/fingerprintRules.ts';
import { pageEnvelope } from '../domain/paging.ts';
import { CRASH_FIELDS, storageKeys, type CrashGroupsRepo, type GroupRow } from '../repos/crashGroups.ts';
import type { OccurrenceScope } from '../repos/crashOccurrences.ts';
import {
  chTime,
  type CrashBreakdown,
  type CrashGroupFacts,
  type CrashOccurrence,
  type CrashOccurrencesRepo,
  type OccurrenceFacts,
} from '../repos/crashOccurrences.ts';
import type { CrashingSession, SessionsRepo } from '../repos/sessions.ts';
import type { AlertState, OutboxRepo } from '../repos/outbox.ts';
import type { SymbolicationService } from './symbolication.ts';
import type { FrameSource } from '../domain/symbolication/sourceContext.ts';
import { ADMIN_ACTOR, recordHistory, SYSTEM_ACTOR, type Actor } from '../repos/crashGroupActivity.ts';

export type RecordCrashResult =
  | { outcome: 'no-session' }
  | { outcome: 'recorded'; groupId: string; newGroup: boolean; regressed?: boolean };

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
}

/** The levels a crash list shows: messages only when asked for. */
export function listLevels(o: Pick<CrashListOptions, 'kind' | 'levels'>): readonly CrashLevel[] {
  if (o.levels && o.levels.length > 0) return o.levels;
  return o.kind === 'message' ? MESSAGE_LEVELS : CRASH_LIST_LEVELS;
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

/** The contract's crash-group fields (the export row), in the contract's order. */
const exportFields = (g: CrashGroup) => Object.fromEntries(CRASH_FIELDS.map((k) => [k, g[k as keyof CrashGroup]]));

export interface CrashGroupsDeps {
  groups: CrashGroupsRepo;
  occurrences: CrashOccurrencesRepo;
  sessions: SessionsRepo;
  outbox: OutboxRepo;
  /** Reads stacks with the release's uploaded source maps / R8 mappings (absent: stacks stay raw). */
  symbols?: Pick<SymbolicationService, 'symbolicate'> & Partial<Pick<SymbolicationService, 'sourceContext'>>;
  /** The project's own packages, which the group key reads as app frames (absent: none). */
  inAppPackagesOf?: (projectId: string) => Promise<string[]>;
  /** The project's fingerprint rules in order (src/domain/fingerprintRules.ts; absent: none). */
  fingerprintRulesOf?: (projectId: string) => Promise<readonly FingerprintRuleSpec[]>;
  /** A group had a new occurrence: its updatedAt moves (coalesced, services/index.ts). */
  touched?: (projectId: string, groupId: string) => void;
  /** A session's first fatal crash: release health's crash fact (services/releases.ts), committed before the session is flagged. */
  crashedSession?: (projectId: string, sessionId: string, session: CrashingSession) => Promise<void>;
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
 * The crash workflow: recording an occurrence (grouping, the first-occurrence decision, the
 * automatic reopening, the session's flags), status changes by hand, and the group's read
 * model over both stores (identity and workflow in Postgres, occurrences in ClickHouse).
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

  return {
    /**
     * The occurrence goes to ClickHouse first (group commit; a retried report is the same row),
     * then Postgres is only read, except: the group's row is created by its first occurrence
     * (which decides the first occurrence exactly once and enqueues its alert in the same
     * transaction); a resolved group from a version it had not had is reopened; an occurrence
     * older than the group's firstSeenAt moves it back; the session is flagged the first time.
     * Each of those writes is conditional, so repeating a report (or racing it) changes nothing
     * more. Writing the occurrence first means a group never shows in Postgres with none to
     * count, and a failure in between is repaired by the SDK's retry.
     */
    async record(projectId: string, c: CrashPayload & RawCrashContext): Promise<RecordCrashResult> {
      const session = await d.sessions.forCrash(projectId, c.sessionId);
      if (!session) return { outcome: 'no-session' };
      // Bounded, never refused (docs/decisions.md, "Crash context"). The occurrence's id stays
      // the hash of the contract's fields: the context is what the SDK attached, not what
      // happened, and a retry that re-attaches it differently is still the same occurrence.
      const cx = boundCrashContext(c, c.isFatal);
      // Grouped on the stack as the release's artifacts read it (docs/decisions.md, "One bug,
      // one group: grouping on parsed frames"); the raw stack is kept as sent.
      const sym = d.symbols
        ? await d.symbols.symbolicate(projectId, session.app_version, session.app_build_number, c.stackTrace, c.message)
        : { stack: c.stackTrace, message: c.message, mapped: 0 };
      const occurrenceId = crashOccurrenceId(c);
      const keyOpts = { inAppPackages: (await d.inAppPackagesOf?.(projectId)) ?? [], fingerprint: c.fingerprint };
      const rules = (await d.fingerprintRulesOf?.(projectId)) ?? [];

      /** The key of a stack: the project's first matching fingerprint rule's, else the default key. */
      const keyOf = (stack: string, message: string) => {
        const base = crashGroupKey(stack, message, keyOpts);
        const rule = rules.length
          ? firstMatchingRule(rules, fingerprintInput(stack, message, keyOpts.inAppPackages))
          : undefined;
        return { base, key: rule ? fingerprintKey(rule.fingerprint, base) : base };
      };

      /**
       * The group a stack leads to: by its key, else (an upgrade never splits a group) by the
       * previous rule's key, which then records the new key. `store` is the key its
       * occurrences are stored under in ClickHouse: the group's own.
       */
      const resolve = async (stack: string, message: string) => {
        const { base, key } = keyOf(stack, message);
        // A project's rule names its group itself: the previous rule's key is not consulted.
        const legacy = key === base ? legacyGroupKey(stack) : key;
        let found = await groups.byKey(projectId, key);
        if (!found && legacy !== key) {
          const old = await groups.byKey(projectId, legacy);
          if (old) {
            await groups.addKey(projectId, key, old.id, GROUP_RULE_VERSION);
            found = (await groups.byKey(projectId, key)) ?? old;
          }
        }
        return { key, legacy, group: found, store: found?.group_key ?? key };
      };

      let at = await resolve(sym.stack, sym.message);
      if (sym.mapped > 0) {
        // A retry of a report first recorded before the release's artifacts arrived stays in
        // that try's group: its occurrence is stored under the raw stack's key, and a second
        // key would count it twice and open a group for it.
        const raw = await resolve(c.stackTrace, c.message);
        if (raw.store !== at.store && (await occurrences.has(projectId, raw.store, occurrenceId))) at = raw;
      }
      let groupKey = at.store;
      let ruleVersion = GROUP_RULE_VERSION;
      if (!at.group && at.legacy !== at.key && (await occurrences.has(projectId, at.legacy, occurrenceId))) {
        // A retry of a report whose first try, under the previous rule, stored its occurrence and
        // failed before making its group: the group is made under that key, which holds it.
        groupKey = at.legacy;
        ruleVersion = LEGACY_RULE_VERSION;
      }
      const row = {
        project_id: projectId,
        group_key: groupKey,
        id: occurrenceId,
        occurred_at: chTime(c.timestamp),
        session_id: c.sessionId,
        user_id: cx.userId ?? session.user_id,
        device_fingerprint: session.device_fingerprint,
        platform: session.platform,
        os_version: session.os_version,
        app_version: session.app_version,
        brand: session.brand,
        model: session.model,
        message: c.message,
        stack_trace: c.stackTrace,
        is_fatal: c.isFatal,
        handled: c.handled,
        symbolicated_stack: sym.mapped > 0 ? sym.stack : '',
        network_type: session.network_type,
        environment: cx.environment || (session.environment ?? ''),
        level: cx.level,
        tags: cx.tags,
        context: cx.context,
        breadcrumbs: cx.breadcrumbs.length > 0 ? JSON.stringify(cx.breadcrumbs) : '',
        dropped: cx.dropped.length > 0 ? JSON.stringify(cx.dropped) : '',
      };
      await occurrences.add(row);

      let group = at.group;
      let newGroup = false;
      let regressed = false;
      if (!group) {
        newGroup = await groups.createFirst(projectId, {
          groupKey,
          ruleVersion,
          message: sym.message,
          stackHead: stackHead(sym.stack),
          isFatal: c.isFatal,
          handled: c.handled,
          platform: session.platform,
          appVersion: session.app_version,
          osVersion: session.os_version,
          firstSeenAt: c.timestamp,
          firstSessionId: c.sessionId,
          // a message is not a new crash: no crash alert (spike rules with its levels alert on messages)
          alert: !isMessageLevel(cx.level),
        });

        group = await groups.byKey(projectId, groupKey);
        // Created above or by a concurrent first occurrence, and groups are never deleted.
        if (!group) throw new Error(`crash group ${groupKey} of project ${projectId} missing after its insert`);
        if (groupKey !== at.key) await groups.addKey(projectId, at.key, group.id, GROUP_RULE_VERSION);
        // The key joined another group meanwhile (a concurrent upgrade's join): the occurrence is
        // that group's, stored under its key (the same row on every retry).
        if (group.group_key !== groupKey) await occurrences.add({ ...row, group_key: group.group_key });
      }
      if (!newGroup) {
        if (
          session.app_version !== null &&
          statusAfterOccurrence(group.status, session.app_version, group.resolved_versions) === 'open'
        ) {
          const groupId = group.id;
          regressed = await groups.reopen(projectId, groupId, session.app_version, (q) =>
            recordHistory(q, {
              projectId,
              groupId,
              kind: 'regression',
              fromStatus: 'resolved',
              toStatus: 'open',
              actor: SYSTEM_ACTOR,
              appVersion: session.app_version,
              platform: session.platform,
            }),
          );
        }
        if (c.timestamp < Number(group.first_seen_at)) await groups.moveFirstSeen(projectId, group.id, c.timestamp);
        d.touched?.(projectId, group.id);
      }
      // A message (level info or warning: captureMessage) is no crash: the session is not flagged.
      if (!isMessageLevel(cx.level) && (!session.has_crash || (c.isFatal && session.status !== 'crashed'))) {
        // Before the flag: should the fact fail, the retry still finds the session unflagged.
        if (c.isFatal && session.status !== 'crashed') await d.crashedSession?.(projectId, c.sessionId, session);
        await d.sessions.markCrashed(projectId, c.sessionId, c.isFatal, c.timestamp);
      }
      return { outcome: 'recorded', groupId: group.id, newGroup, regressed };
    },

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
     * Most recently seen first. lastSeenAt lives in ClickHouse, so the page is cut after both
     * are read: the project's groups (of the status) from Postgres, their facts in one query.
     */
    async list(
      projectId: string,
      status: CrashGroupStatus | undefined,
      page: number,
      limit: number,
      opts: CrashListOptions = {},
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
      const all = rows
        .filter(shown)
        .map((r) => ({ ...toGroup(r, facts.get(r.group_key)), usersAffected: facts.get(r.group_key)?.users ?? 0 }))
        .filter((g) => opts.kind === undefined || opts.kind === 'message' || g.isFatal === (opts.kind === 'fatal'))
        .sort((a, b) => {
          const x = key(a);
          const y = key(b);
          return x < y ? 1 : x > y ? -1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
        });
      return pageEnvelope(all.slice((page - 1) * limit, page * limit), all.length, page, limit);
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
    export: groups.exportResource(async (projectId, rows) => (await withFacts(projectId, rows)).map(exportFields)),

    /** Moves the updatedAt of groups that had new occurrences. */
    touch: groups.touch,
    /** Resolves once every occurrence accepted so far is written (shutdown, tests). */
    drain: occurrences.drain,
    /** The occurrences' group commit (measured). */
    batcher: occurrences.batcher,
  };
}

export type CrashGroupsService = ReturnType<typeof crashGroupsService>;
