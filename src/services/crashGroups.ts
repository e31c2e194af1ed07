import { present } from '../lib/invariant.ts';
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
import { InvalidParameterError, ValidationError } from '../domain/errors.ts';
import {
  fingerprintInput,
  fingerprintKey,
  firstMatchingRule,
  type FingerprintRuleSpec,
} from '../domain/fingerprintRules.ts';
import { pageEnvelope } from '../domain/paging.ts';
import {
  addKeys,
  countOccurrences,
  countersOf,
  createGroups,
  PrecountedStaleError,
  type CountedOccurrence,
  CRASH_FIELDS,
  moveFirstSeenMany,
  reopenIn,
  statesByKeys,
  storageKeys,
  type CrashGroupsRepo,
  type GroupRow,
  type GroupState,
} from '../repos/crashGroups.ts';
import { classify } from '../pipeline/errors.ts';
import type { OccurrenceScope } from '../repos/crashOccurrences.ts';
import {
  chTime,
  type CrashBreakdown,
  type CrashGroupFacts,
  type CrashOccurrence,
  type CrashOccurrencesRepo,
  type OccurrenceFacts,
} from '../repos/crashOccurrences.ts';
import { sessionQueries, type CrashingSession, type SessionsRepo } from '../repos/sessions.ts';
import type { AlertState, OutboxRepo } from '../repos/outbox.ts';
import type { SymbolicationService } from './symbolication.ts';
import type { FrameSource } from '../domain/symbolication/sourceContext.ts';
import { ADMIN_ACTOR, recordHistory, SYSTEM_ACTOR, type Actor } from '../repos/crashGroupActivity.ts';

export type RecordCrashResult =
  | { outcome: 'no-session' }
  | { outcome: 'recorded'; groupId: string; newGroup: boolean; regressed?: boolean };

/** One crash report of a batch: the project it was accepted for and the report. */
export interface CrashInput {
  projectId: string;
  crash: CrashPayload & RawCrashContext;
}

/** A batch's answer for one report: recorded, its session gone, or refused for an error of its own. */
export type BatchOutcome = RecordCrashResult | { outcome: 'refused'; error: unknown };

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

  /** Batches whose precounted new groups met the ledger, rolled back and decided again, since start. */
  let recounted = 0;

  /**
   * Records a batch of crash reports (docs/decisions.md, "Crash batches"): each report is read
   * (its session, its stack through the release's cached artifacts, its group key), the
   * batch's groups are found with one read per project, its occurrences go to ClickHouse in one
   * insert (a retried report is the same row), and then one Postgres transaction decides for
   * the whole batch: the groups of first occurrences (INSERT … ON CONFLICT, each exactly once,
   * with their outbox jobs), the counters through the occurrence ledger (each occurrence once),
   * reopenings, firstSeenAt moves and the sessions' flags. Every write is conditional, so
   * replaying a batch (kill -9 before the spool's ack) or racing another process changes
   * nothing more. A report that cannot be recorded (its session gone: `no-session`; a program
   * error on it: `refused`) leaves the rest of its batch going on; an error of the stores fails
   * the whole batch (thrown), to be tried again.
   */
  async function recordBatch(items: readonly CrashInput[]): Promise<BatchOutcome[]> {
    const out: BatchOutcome[] = items.map(() => ({ outcome: 'refused', error: new Error('not recorded') }));
    const sessions = await d.sessions.forCrashMany(
      items.map((x) => ({ projectId: x.projectId, sessionId: x.crash.sessionId })),
    );
    const projects = [...new Set(items.map((x) => x.projectId))];
    const perProject = new Map(
      await Promise.all(
        projects.map(
          async (p) =>
            [
              p,
              {
                inAppPackages: (await d.inAppPackagesOf?.(p)) ?? [],
                rules: (await d.fingerprintRulesOf?.(p)) ?? [],
              },
            ] as const,
        ),
      ),
    );

    // 1. Each report read on its own: an error here is this report's (or the stores', then thrown).
    type Keyed = { base: string; key: string; legacy: string };
    type Prepared = {
      i: number;
      projectId: string;
      c: CrashInput['crash'];
      session: CrashingSession;
      cx: ReturnType<typeof boundCrashContext>;
      sym: { stack: string; message: string; mapped: number };
      occurrenceId: string;
      at: Keyed;
      raw: Keyed | null;
    };
    const prepared: Prepared[] = [];
    let storeError: unknown;
    type Reading = Pick<Prepared, 'sym' | 'at' | 'raw'>;
    const readings = new Map<string, Promise<Reading>>();
    const readStack = async (
      projectId: string,
      session: CrashingSession,
      c: CrashInput['crash'],
      inAppPackages: string[],
      rules: readonly FingerprintRuleSpec[],
    ): Promise<Reading> => {
      // Grouped on the stack as the release's artifacts read it (docs/decisions.md, "One bug,
      // one group: grouping on parsed frames"); the raw stack is kept as sent.
      const sym = d.symbols
        ? await d.symbols.symbolicate(projectId, session.app_version, session.app_build_number, c.stackTrace, c.message)
        : { stack: c.stackTrace, message: c.message, mapped: 0 };
      const keyOpts = { inAppPackages, fingerprint: c.fingerprint };
      /** The key of a stack: the project's first matching fingerprint rule's, else the default key. */
      const keyOf = (stack: string, message: string): Keyed => {
        const base = crashGroupKey(stack, message, keyOpts);
        const rule = rules.length
          ? firstMatchingRule(rules, fingerprintInput(stack, message, inAppPackages))
          : undefined;
        const key = rule ? fingerprintKey(rule.fingerprint, base) : base;
        // A project's rule names its group itself: the previous rule's key is not consulted.
        return { base, key, legacy: key === base ? legacyGroupKey(stack) : key };
      };
      return {
        sym,
        at: keyOf(sym.stack, sym.message),
        raw: sym.mapped > 0 ? keyOf(c.stackTrace, c.message) : null,
      };
    };
    const prepare = async ({ projectId, crash: c }: CrashInput, i: number) => {
      try {
        const session = sessions.get(`${projectId}:${c.sessionId}`);
        if (!session) {
          out[i] = { outcome: 'no-session' };
          return;
        }
        const { inAppPackages, rules } = perProject.get(projectId) ?? { inAppPackages: [], rules: [] };
        // Bounded, never refused (docs/decisions.md, "Crash context"). The occurrence's id stays
        // the hash of the contract's fields: the context is what the SDK attached, not what
        // happened, and a retry that re-attaches it differently is still the same occurrence.
        const cx = boundCrashContext(c, c.isFatal);
        // A storm is one stack many times over: a batch reads each distinct (release, stack,
        // message, fingerprint) once. Its artifacts, packages and rules are fixed for the batch, so
        // every copy would read the same.
        const readKey = JSON.stringify([
          projectId,
          session.app_version,
          session.app_build_number,
          c.stackTrace,
          c.message,
          c.fingerprint ?? null,
        ]);
        let reading = readings.get(readKey);
        if (!reading) {
          reading = readStack(projectId, session, c, inAppPackages, rules);
          readings.set(readKey, reading);
        }
        const { sym, at, raw } = await reading;
        prepared.push({
          i,
          projectId,
          c,
          session,
          cx,
          sym,
          occurrenceId: crashOccurrenceId(c),
          at,
          raw,
        });
      } catch (error) {
        if (classify(error).kind === 'retryable') storeError ??= error;
        else out[i] = { outcome: 'refused', error };
      }
    };
    // One report of each release first: its artifacts are read and cached once, and the rest of
    // the batch finds them cached instead of each reading them at once.
    const release = (x: CrashInput) => {
      const s = sessions.get(`${x.projectId}:${x.crash.sessionId}`);
      return `${x.projectId}:${s?.app_version ?? ''}:${s?.app_build_number ?? ''}`;
    };
    const firstOf = new Map<string, number>();
    items.forEach((x, i) => {
      if (!firstOf.has(release(x))) firstOf.set(release(x), i);
    });
    const leaders = new Set(firstOf.values());
    await Promise.all([...leaders].map((i) => prepare(items[i] as CrashInput, i)));
    await Promise.all(items.map((x, i) => (leaders.has(i) ? undefined : prepare(x, i))));
    if (storeError !== undefined) throw storeError;
    prepared.sort((a, b) => a.i - b.i);

    // 2. The groups the keys lead to: one read per project. An upgrade never splits a group: a
    // key unknown whose previous rule's key leads to a group joins it.
    const states = new Map<string, Map<string, GroupState>>();
    for (const p of projects) {
      const keys = prepared
        .filter((x) => x.projectId === p)
        .flatMap((x) => [x.at.key, x.at.legacy, ...(x.raw ? [x.raw.key, x.raw.legacy] : [])]);
      states.set(p, await groups.statesByKeys(p, keys));
    }
    const joins: { projectId: string; key: string; groupId: string; ruleVersion: number }[] = [];
    const resolve = (projectId: string, k: Keyed) => {
      const known = states.get(projectId) ?? new Map<string, GroupState>();
      let group = known.get(k.key);
      if (!group && k.legacy !== k.key) {
        group = known.get(k.legacy);
        if (group) joins.push({ projectId, key: k.key, groupId: group.id, ruleVersion: GROUP_RULE_VERSION });
      }
      return { ...k, group, store: group?.group_key ?? k.key };
    };

    // 3. Retries of reports first stored under another key (before the release's artifacts
    // arrived; under the previous rule): one ClickHouse read per project, only for those.
    const resolved = prepared.map((x) => ({
      x,
      at: resolve(x.projectId, x.at),
      raw: x.raw ? resolve(x.projectId, x.raw) : null,
    }));
    const stored = new Map<string, Set<string>>();
    for (const p of projects) {
      const pairs = resolved
        .filter((r) => r.x.projectId === p)
        .flatMap((r) => [
          ...(r.raw && r.raw.store !== r.at.store ? [{ groupKey: r.raw.store, id: r.x.occurrenceId }] : []),
          ...(!r.at.group && r.at.legacy !== r.at.key ? [{ groupKey: r.at.legacy, id: r.x.occurrenceId }] : []),
          ...(r.raw && !r.raw.group && r.raw.legacy !== r.raw.key
            ? [{ groupKey: r.raw.legacy, id: r.x.occurrenceId }]
            : []),
        ]);
      stored.set(p, await occurrences.hasMany(p, pairs));
    }
    const isStored = (p: string, key: string, id: string) => stored.get(p)?.has(`${key}\u0000${id}`) ?? false;

    const plans = resolved.map(({ x, at: first, raw }) => {
      let at = first;
      // A retry of a report first recorded before the release's artifacts arrived stays in that
      // try's group: a second key would count it twice and open a group for it.
      if (raw && raw.store !== at.store && isStored(x.projectId, raw.store, x.occurrenceId)) at = raw;
      let groupKey = at.store;
      let ruleVersion = GROUP_RULE_VERSION;
      if (!at.group && at.legacy !== at.key && isStored(x.projectId, at.legacy, x.occurrenceId)) {
        // A retry of a report whose first try, under the previous rule, stored its occurrence and
        // failed before making its group: the group is made under that key, which holds it.
        groupKey = at.legacy;
        ruleVersion = LEGACY_RULE_VERSION;
      }
      const { c, session, cx, sym } = x;
      const row = {
        project_id: x.projectId,
        group_key: groupKey,
        id: x.occurrenceId,
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
      const message = isMessageLevel(cx.level);
      // A message (level info or warning: captureMessage) is no crash: the session is not flagged.
      const flag = !message && (!session.has_crash || (c.isFatal && session.status !== 'crashed'));
      return { x, at, groupKey, ruleVersion, row, message, flag, group: at.group, newGroup: false, regressed: false };
    });

    // 4. ClickHouse first, in one insert: a group never shows in Postgres with none to count,
    // and a failure in between is repaired by the replay. Release health's crash fact of a
    // session's first fatal crash commits before the session is flagged.
    const facts = new Map<string, Promise<void>>();
    for (const pl of plans) {
      const { c, session, projectId } = pl.x;
      const k = `${projectId}:${c.sessionId}`;
      if (pl.flag && c.isFatal && session.status !== 'crashed' && d.crashedSession && !facts.has(k)) {
        facts.set(k, d.crashedSession(projectId, c.sessionId, session));
      }
    }
    await Promise.all([occurrences.addMany(plans.map((p) => p.row)), ...facts.values()]);

    // 5. Postgres: the whole batch's decisions in one transaction. A new group is written with
    // its counters (precounted); should the ledger show one of its occurrences counted already,
    // the transaction is rolled back and the batch decided again, every group counted by the ledger.
    const counted = (pl: (typeof plans)[number], groupId: string): CountedOccurrence => ({
      projectId: pl.x.projectId,
      id: pl.x.occurrenceId,
      groupId,
      cls: pl.message ? 1 : 0,
      fatal: pl.x.c.isFatal,
      at: pl.x.c.timestamp,
      user: pl.row.user_id ?? '',
    });
    let moved: (typeof plans)[number]['row'][] = [];
    const decide = (precount: boolean) =>
      groups.tx(async (q) => {
        moved = [];
        for (const pl of plans) Object.assign(pl, { group: pl.at.group, newGroup: false, regressed: false });
        await addKeys(q, joins);
        // First occurrences: one new group per key, its first the earliest report of the batch.
        const ofKey = new Map<string, (typeof plans)[number][]>();
        for (const pl of plans) {
          if (pl.group) continue;
          const k = `${pl.x.projectId}\u0000${pl.groupKey}`;
          const same = ofKey.get(k);
          if (same) same.push(pl);
          else ofKey.set(k, [pl]);
        }
        const firsts = new Map(
          [...ofKey].map(
            ([k, same]) => [k, same.reduce((a, b) => (b.x.c.timestamp < a.x.c.timestamp ? b : a))] as const,
          ),
        );
        const made = await createGroups(
          q,
          [...firsts].map(([k, pl]) => ({
            projectId: pl.x.projectId,
            groupKey: pl.groupKey,
            ruleVersion: pl.ruleVersion,
            message: pl.x.sym.message,
            stackHead: stackHead(pl.x.sym.stack),
            isFatal: pl.x.c.isFatal,
            handled: pl.x.c.handled,
            platform: pl.x.session.platform,
            appVersion: pl.x.session.app_version,
            osVersion: pl.x.session.os_version,
            firstSeenAt: pl.x.c.timestamp,
            firstSessionId: pl.x.c.sessionId,
            // a message is not a new crash: no crash alert (spike rules with its levels alert on messages)
            alert: !pl.message,
            counters: precount ? countersOf((ofKey.get(k) ?? []).map((o) => counted(o, ''))) : undefined,
          })),
        );
        // A group made just now is known without reading it back: its row is what was inserted
        // (a bad release's storm of new groups spent a key lookup per group on this read).
        const fresh = new Map<string, GroupState>();
        for (const [k, pl] of firsts) {
          const id = made.get(k);
          if (id === undefined) continue;
          pl.newGroup = true;
          fresh.set(k, {
            id,
            group_key: pl.groupKey,
            status: 'open',
            first_seen_at: pl.x.c.timestamp,
            resolved_versions: [],
          });
        }
        // The groups of the others: made by a concurrent first occurrence (groups are never deleted).
        for (const p of projects) {
          const open = plans.filter((pl) => !pl.group && pl.x.projectId === p);
          if (open.length === 0) continue;
          const now = await statesByKeys(
            q,
            p,
            open.filter((pl) => !fresh.has(`${p}\u0000${pl.groupKey}`)).map((pl) => pl.groupKey),
          );
          const late: { projectId: string; key: string; groupId: string; ruleVersion: number }[] = [];
          for (const pl of open) {
            const g = fresh.get(`${p}\u0000${pl.groupKey}`) ?? now.get(pl.groupKey);
            if (!g) throw new Error(`crash group ${pl.groupKey} of project ${p} missing after its insert`);
            pl.group = g;
            if (pl.groupKey !== pl.at.key)
              late.push({ projectId: p, key: pl.at.key, groupId: g.id, ruleVersion: GROUP_RULE_VERSION });
            // The key joined another group meanwhile (a concurrent upgrade's join): the occurrence is
            // that group's, stored under its key (the same row on every retry).
            if (g.group_key !== pl.groupKey) moved.push({ ...pl.row, group_key: g.group_key });
          }
          await addKeys(q, late);
        }
        const known = plans.filter((pl): pl is typeof pl & { group: GroupState } => pl.group !== undefined);
        // Regressions: a resolved group's occurrence from a version it had not had, once per (group, version).
        const reopened = new Map<string, boolean>();
        for (const pl of known) {
          const v = pl.x.session.app_version;
          if (pl.newGroup || v === null) continue;
          if (statusAfterOccurrence(pl.group.status, v, pl.group.resolved_versions) !== 'open') continue;
          const k = `${pl.group.id}\u0000${v}`;
          if (!reopened.has(k)) {
            const { projectId } = pl.x;
            const groupId = pl.group.id;
            const platform = pl.x.session.platform;
            reopened.set(
              k,
              await reopenIn(q, projectId, groupId, v, (t) =>
                recordHistory(t, {
                  projectId,
                  groupId,
                  kind: 'regression',
                  fromStatus: 'resolved',
                  toStatus: 'open',
                  actor: SYSTEM_ACTOR,
                  appVersion: v,
                  platform,
                }),
              ),
            );
            pl.regressed = reopened.get(k) ?? false;
          }
        }
        await moveFirstSeenMany(
          q,
          known.filter((pl) => !pl.newGroup).map((pl) => ({ groupId: pl.group.id, at: pl.x.c.timestamp })),
        );
        await countOccurrences(
          q,
          known.map((pl) => counted(pl, pl.group.id)),
          precount ? new Set([...fresh.values()].map((g) => g.id)) : undefined,
        );
        await sessionQueries.markCrashedMany(
          q,
          plans
            .filter((pl) => pl.flag)
            .map((pl) => ({
              projectId: pl.x.projectId,
              sessionId: pl.x.c.sessionId,
              isFatal: pl.x.c.isFatal,
              at: pl.x.c.timestamp,
            })),
        );
      });
    try {
      await decide(true);
    } catch (err) {
      if (!(err instanceof PrecountedStaleError)) throw err;
      recounted++;
      await decide(false);
    }
    await occurrences.addMany(moved);

    for (const pl of plans) {
      const group = pl.group;
      if (!group) throw new Error(`crash group ${pl.groupKey} unresolved after its batch`);
      if (!pl.newGroup) d.touched?.(pl.x.projectId, group.id);
      out[pl.x.i] = { outcome: 'recorded', groupId: group.id, newGroup: pl.newGroup, regressed: pl.regressed };
    }
    return out;
  }

  return {
    recordBatch,
    /** Batches decided twice: a new group's occurrence was in the ledger already (since start). */
    recountedBatches: () => recounted,

    /** One report: a batch of one (recordBatch). */
    async record(projectId: string, c: CrashPayload & RawCrashContext): Promise<RecordCrashResult> {
      const [r] = await recordBatch([{ projectId, crash: c }]);
      if (!r) throw new Error('a batch of one recorded nothing');
      if (r.outcome === 'refused') throw r.error;
      return r;
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
     * Most recently seen first (or another order), filtered, sorted and cut in Postgres on the
     * groups' counters (repos/crashGroups.ts listPage; docs/decisions.md, "The paged crash
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
