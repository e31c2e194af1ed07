import { describe, expect, it } from 'vitest';
import { boundCrashContext, type RawCrashContext } from '../../src/domain/crashContext.ts';
import {
  crashOccurrenceId,
  GROUP_RULE_VERSION,
  LEGACY_RULE_VERSION,
  type CrashPayload,
} from '../../src/domain/crashGrouping.ts';
import { keyInProject, type GroupState } from '../../src/repos/crashGroups/index.ts';
import type { CrashingSession } from '../../src/repos/sessions.ts';
import {
  earlierKeys,
  newKeys,
  planOccurrence,
  resolveKey,
  type GroupJoin,
  type Keyed,
  type ReadReport,
} from '../../src/pipeline/recordCrashes/plan.ts';

// How a report of a batch is placed: plain functions, no stores (src/pipeline/recordCrashes/plan.ts).

const P = 'project-1';
const session = (o: Partial<CrashingSession> = {}): CrashingSession => ({
  status: 'active',
  has_crash: false,
  user_id: 'u-session',
  app_version: '2.0.0',
  platform: 'android',
  os_version: '14',
  brand: 'Google',
  model: 'Pixel 8',
  device_fingerprint: 'dev-1',
  app_build_number: '200',
  network_type: 'wifi',
  started_at: 1_700_000_000_000,
  environment: 'production',
  ...o,
});
const group = (id: string, key: string, o: Partial<GroupState> = {}): GroupState => ({
  id,
  group_key: key,
  status: 'open',
  first_seen_at: 1,
  resolved_versions: [],
  ...o,
});
const keyed = (key: string, legacy = key): Keyed => ({ base: key, key, legacy });

let n = 0;
function report(
  o: {
    c?: Partial<CrashPayload & RawCrashContext>;
    s?: Partial<CrashingSession>;
    at?: Keyed;
    raw?: Keyed | null;
    mapped?: number;
  } = {},
): ReadReport {
  const c = {
    sessionId: 's-1',
    message: 'Error: boom',
    stackTrace: 'Error: boom\n    at f (app.js:1:1)',
    isFatal: true,
    handled: false,
    timestamp: 1_700_000_000_000 + n++,
    ...o.c,
  };
  return {
    i: n,
    projectId: P,
    c,
    session: session(o.s),
    cx: boundCrashContext(c, c.isFatal),
    sym: { stack: 'Error: boom\n    at f (src/f.ts:9:2)', message: c.message, mapped: o.mapped ?? 0 },
    occurrenceId: crashOccurrenceId(c),
    at: o.at ?? keyed('k-at'),
    raw: o.raw ?? null,
  };
}

describe('resolveKey', () => {
  it('leads a known key to its group, stored under the group key', () => {
    const joins: GroupJoin[] = [];
    const r = resolveKey(new Map([['k', group('g1', 'k')]]), P, keyed('k', 'old'), joins);
    expect(r).toMatchObject({ group: { id: 'g1' }, store: 'k' });
    expect(joins).toEqual([]);
  });

  it("joins an unknown key to the group of its previous rule's key, stored under that group's key", () => {
    const joins: GroupJoin[] = [];
    const r = resolveKey(new Map([['old', group('g1', 'old')]]), P, keyed('new', 'old'), joins);
    expect(r).toMatchObject({ group: { id: 'g1' }, store: 'old' });
    expect(joins).toEqual([{ projectId: P, key: 'new', groupId: 'g1', ruleVersion: GROUP_RULE_VERSION }]);
  });

  it('leaves a key no group has for the transaction to decide', () => {
    const joins: GroupJoin[] = [];
    expect(resolveKey(new Map(), P, keyed('new', 'old'), joins)).toMatchObject({ group: undefined, store: 'new' });
    expect(joins).toEqual([]);
  });
});

describe('earlierKeys', () => {
  const none = new Map<string, GroupState>();
  it('asks ClickHouse nothing for a report whose key has its group and whose stack was not mapped', () => {
    const x = report();
    const at = resolveKey(new Map([['k-at', group('g', 'k-at')]]), P, x.at, []);
    expect(earlierKeys({ x, at, raw: null })).toEqual([]);
  });

  it("asks under the raw stack's key and the previous rule's keys, where a first try could have stored it", () => {
    const x = report({ at: keyed('mapped', 'mapped-old'), raw: keyed('raw', 'raw-old'), mapped: 2 });
    const at = resolveKey(none, P, keyed('mapped', 'mapped-old'), []);
    const raw = resolveKey(none, P, keyed('raw', 'raw-old'), []);
    const id = x.occurrenceId;
    expect(earlierKeys({ x, at, raw })).toEqual([
      { groupKey: 'raw', id },
      { groupKey: 'mapped-old', id },
      { groupKey: 'raw-old', id },
    ]);
  });
});

describe('planOccurrence', () => {
  it("keeps a retry in the group of the raw stack's key when its first try was stored there", () => {
    const x = report({ at: keyed('mapped'), raw: keyed('raw'), mapped: 1 });
    const at = resolveKey(new Map(), P, x.at, []);
    const raw = resolveKey(new Map([['raw', group('g-raw', 'raw')]]), P, keyed('raw'), []);
    const pl = planOccurrence(x, at, raw, (k) => k === 'raw');
    expect(pl).toMatchObject({ groupKey: 'raw', group: { id: 'g-raw' }, ruleVersion: GROUP_RULE_VERSION });
    expect(pl.row.group_key).toBe('raw');
    // not stored there: the mapped stack's key
    expect(planOccurrence(x, at, raw, () => false)).toMatchObject({ groupKey: 'mapped', group: undefined });
  });

  it("makes the group under the previous rule's key when a first try stored its occurrence there", () => {
    const x = report({ at: keyed('new', 'old') });
    const at = resolveKey(new Map(), P, x.at, []);
    expect(planOccurrence(x, at, null, (k) => k === 'old')).toMatchObject({
      groupKey: 'old',
      ruleVersion: LEGACY_RULE_VERSION,
    });
    expect(planOccurrence(x, at, null, () => false)).toMatchObject({
      groupKey: 'new',
      ruleVersion: GROUP_RULE_VERSION,
    });
  });

  it('flags a session on its first crash and on a fatal one after a non-fatal, never for a message', () => {
    const place = (c: Partial<CrashPayload & RawCrashContext>, s: Partial<CrashingSession>) => {
      const x = report({ c, s });
      return planOccurrence(x, resolveKey(new Map(), P, x.at, []), null, () => false);
    };
    expect(place({ isFatal: false }, {})).toMatchObject({ flag: true, message: false });
    expect(place({ isFatal: false }, { has_crash: true })).toMatchObject({ flag: false });
    expect(place({ isFatal: true }, { has_crash: true, status: 'active' })).toMatchObject({ flag: true });
    expect(place({ isFatal: true }, { has_crash: true, status: 'crashed' })).toMatchObject({ flag: false });
    expect(place({ isFatal: false, level: 'warning' }, {})).toMatchObject({ flag: false, message: true });
  });

  it('writes the row from the report, its bounded context and its session', () => {
    const x = report({
      c: { environment: 'staging', userId: 'u-report', tags: { plan: 'pro' } },
      mapped: 1,
      at: keyed('k'),
    });
    const { row } = planOccurrence(x, resolveKey(new Map(), P, x.at, []), null, () => false);
    expect(row).toMatchObject({
      project_id: P,
      group_key: 'k',
      id: x.occurrenceId,
      session_id: 's-1',
      user_id: 'u-report',
      environment: 'staging',
      app_version: '2.0.0',
      symbolicated_stack: x.sym.stack,
      tags: { plan: 'pro' },
      breadcrumbs: '',
    });
    // no context: the session's user and environment; an unmapped stack stores no second copy
    const y = report();
    const plain = planOccurrence(y, resolveKey(new Map(), P, y.at, []), null, () => false).row;
    expect(plain).toMatchObject({ user_id: 'u-session', environment: 'production', symbolicated_stack: '' });
  });
});

describe('newKeys', () => {
  it('gathers the reports of each key without a group; the earliest of the batch makes the group', () => {
    const place = (key: string, timestamp: number, known?: GroupState) => {
      const x = report({ at: keyed(key), c: { timestamp } });
      const at = resolveKey(new Map(known ? [[key, known]] : []), P, x.at, []);
      return planOccurrence(x, at, null, () => false);
    };
    const later = place('a', 300);
    const earliest = place('a', 100);
    const tie = place('a', 100);
    const other = place('b', 200);
    const grouped = place('c', 50, group('g-c', 'c'));
    const keys = newKeys([later, earliest, tie, other, grouped]);
    expect([...keys.keys()]).toEqual([keyInProject(P, 'a'), keyInProject(P, 'b')]);
    expect(keys.get(keyInProject(P, 'a'))?.first).toBe(earliest);
    expect(keys.get(keyInProject(P, 'a'))?.all).toEqual([later, earliest, tie]);
    expect(keys.get(keyInProject(P, 'b'))?.first).toBe(other);
  });
});
