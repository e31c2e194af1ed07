import { describe, expect, it } from 'vitest';
import { boundCrashContext, isMessageLevel, LIMITS, resolveLevel } from '../../src/domain/crashContext.ts';

const reasons = (r: { dropped: { field: string; reason: string }[] }) =>
  r.dropped.map((d) => `${d.field}: ${d.reason}`);

/** A value nested `n` objects deep, built without recursion. */
function nested(n: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let at = root;
  for (let i = 1; i < n; i++) {
    const next: Record<string, unknown> = {};
    at.a = next;
    at = next;
  }
  return root;
}

describe('crash context bounding', () => {
  it('keeps every valid field as sent', () => {
    const r = boundCrashContext(
      {
        environment: 'production',
        userId: 'user-42',
        tags: { screen: 'checkout', 'feature.flag': 'on' },
        context: { cart: { items: 3, total: 9.5 }, ab: ['x', null, true] },
        breadcrumbs: [
          { timestamp: 1000, category: 'ui.click', message: 'Pay tapped', level: 'info', data: { id: 'pay' } },
          { timestamp: 1200, category: 'http', message: 'POST /pay 500', level: 'error' },
        ],
        level: 'error',
      },
      false,
    );
    expect(r).toEqual({
      environment: 'production',
      userId: 'user-42',
      tags: { screen: 'checkout', 'feature.flag': 'on' },
      context: JSON.stringify({ cart: { items: 3, total: 9.5 }, ab: ['x', null, true] }),
      breadcrumbs: [
        { timestamp: 1000, category: 'ui.click', message: 'Pay tapped', level: 'info', data: { id: 'pay' } },
        { timestamp: 1200, category: 'http', message: 'POST /pay 500', level: 'error' },
      ],
      level: 'error',
      dropped: [],
    });
  });

  it('nothing sent: defaults, nothing dropped', () => {
    expect(boundCrashContext({}, true)).toEqual({
      environment: '',
      userId: null,
      tags: {},
      context: '',
      breadcrumbs: [],
      level: 'fatal',
      dropped: [],
    });
    expect(boundCrashContext({ environment: null, tags: null }, false).level).toBe('error');
  });

  it('level: defaults from isFatal, isFatal wins a contradiction, unknown values fall back', () => {
    expect(resolveLevel(undefined, true)).toEqual({ level: 'fatal' });
    expect(resolveLevel(undefined, false)).toEqual({ level: 'error' });
    expect(resolveLevel('info', false)).toEqual({ level: 'info' });
    expect(resolveLevel('warning', false)).toEqual({ level: 'warning' });
    const contradicts = expect.stringContaining('contradicts isFatal');
    expect(resolveLevel('warning', true)).toMatchObject({ level: 'fatal', reason: contradicts });
    expect(resolveLevel('fatal', false)).toMatchObject({ level: 'error', reason: contradicts });
    const unknown = expect.stringContaining('must be one of');
    expect(resolveLevel('FATAL', false)).toMatchObject({ level: 'error', reason: unknown });

    expect(resolveLevel(3, true)).toMatchObject({ level: 'fatal' });
    expect(isMessageLevel('info') && isMessageLevel('warning')).toBe(true);
    expect(isMessageLevel('error') || isMessageLevel('fatal')).toBe(false);
  });

  it('environment and userId: wrong type, too long, bad characters are dropped with a reason', () => {
    for (const environment of [42, 'a'.repeat(65), 'prod uction', 'prod\u0000', '<script>', '', { x: 1 }]) {
      const r = boundCrashContext({ environment }, true);
      expect(r.environment).toBe('');
      expect(r.dropped).toHaveLength(1);
      expect(r.dropped[0]!.field).toBe('environment');
    }
    expect(boundCrashContext({ environment: 'a'.repeat(64) }, true).environment).toHaveLength(64);
    const u = boundCrashContext({ userId: 'x'.repeat(5_000_000) }, true);
    expect(u.userId).toBeNull();
    expect(reasons(u)[0]).toMatch(/^userId: longer than 1024 characters \(5000000\); the session's user kept$/);
    expect(boundCrashContext({ userId: 'bob\nalice' }, true).userId).toBeNull();
    expect(boundCrashContext({ userId: 'مستخدم‮' }, true).userId).toBe('مستخدم‮');
  });

  it('tags: each bad entry dropped alone, prototype keys refused, at most 50 kept', () => {
    const tags = JSON.parse(
      '{"__proto__": "polluted", "constructor": "c", "ok": "yes", "n": 3, "bad key": "v", ' +
        '"long": "' +
        'v'.repeat(201) +
        '", "ctl": "a\\u0007b", "' +
        'k'.repeat(33) +
        '": "v"}',
    );
    const r = boundCrashContext({ tags }, true);
    expect(r.tags).toEqual({ ok: 'yes' });
    expect(Object.getPrototypeOf(r.tags)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(reasons(r)).toEqual([
      'tags.__proto__: reserved key',
      'tags.constructor: reserved key',
      'tags.n: value must be a string, got a number',
      'tags: a key must be made of letters, digits, _ . : -',
      'tags.long: value longer than 200 characters (201)',
      'tags.ctl: value contains control characters',
      'tags: a key longer than 32 characters (33)',
    ]);
    const many = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`t${i}`, `v${i}`]));
    const m = boundCrashContext({ tags: many }, true);
    expect(Object.keys(m.tags)).toHaveLength(LIMITS.tags);
    expect(m.tags.t0).toBe('v0');
    expect(reasons(m)).toEqual(['tags: more than 50 tags: 20 dropped']);
    expect(reasons(boundCrashContext({ tags: ['a'] }, true))).toEqual([
      'tags: must be an object of strings, got an array',
    ]);
  });

  it('context: an object, bounded in depth and bytes, prototype keys removed, deep hostile nesting safe', () => {
    expect(reasons(boundCrashContext({ context: 'x' }, true))).toEqual(['context: must be an object, got a string']);
    expect(reasons(boundCrashContext({ context: [1] }, true))).toEqual(['context: must be an object, got an array']);
    expect(boundCrashContext({ context: nested(5) }, true).context).toBe('{"a":{"a":{"a":{"a":{}}}}}');
    const deep = boundCrashContext({ context: nested(6) }, true);
    expect(deep.context).toBe('');
    expect(reasons(deep)).toEqual(['context: nests deeper than 5 levels']);
    // 200k levels: a recursive walk (JSON.stringify included) would overflow the stack
    expect(reasons(boundCrashContext({ context: nested(200_000) }, true))).toEqual([
      'context: nests deeper than 5 levels',
    ]);
    const big = boundCrashContext({ context: { s: 'x'.repeat(9000) } }, true);
    expect(big.context).toBe('');
    expect(reasons(big)[0]).toMatch(/^context: larger than 8192 bytes as JSON/);
    const hostile = JSON.parse('{"a": {"__proto__": {"x": 1}, "b": 1}, "constructor": 2}');
    const proto = boundCrashContext({ context: hostile }, true);
    expect(JSON.parse(proto.context)).toEqual({ a: { b: 1 } });
    expect(reasons(proto)).toEqual(['context: 2 reserved key(s) (__proto__, constructor, prototype) removed']);
    const ctl = boundCrashContext({ context: { t: 'a\u0000b\u001bc\nd', n: Infinity } }, true);
    expect(JSON.parse(ctl.context)).toEqual({ t: 'a\uFFFDb\uFFFDc\nd', n: null });
  });

  it('breadcrumbs: the last 100 kept, bad entries dropped alone, oldest cut over the byte budget', () => {
    const crumbs = Array.from({ length: 130 }, (_, i) => ({
      timestamp: 1000 + i,
      category: 'nav',
      message: `m${i}`,
      level: 'info',
    }));
    const r = boundCrashContext({ breadcrumbs: crumbs }, true);
    expect(r.breadcrumbs).toHaveLength(100);
    expect(r.breadcrumbs[0]!.message).toBe('m30');
    expect(r.breadcrumbs[99]!.message).toBe('m129');
    expect(reasons(r)).toEqual(['breadcrumbs: more than 100 entries: the first 30 dropped']);

    const bad = boundCrashContext(
      {
        breadcrumbs: [
          null,
          { timestamp: 'x', category: 'a', message: 'b' },
          { timestamp: 1, message: 'no category' },
          { timestamp: 1, category: 'c', message: 'm'.repeat(1025) },
          { timestamp: 1, category: 'c', message: 5 },
          { timestamp: 2, category: 'c', message: 'ok', level: 'loud', data: [1] },
          { timestamp: 3.6, category: 'c', data: JSON.parse('{"__proto__": 1, "k": "<script>alert(1)</script>"}') },
        ],
      },
      true,
    );
    expect(bad.breadcrumbs).toEqual([
      { timestamp: 2, category: 'c', message: 'ok', level: 'info' },
      { timestamp: 4, category: 'c', message: '', level: 'info', data: { k: '<script>alert(1)</script>' } },
    ]);
    expect(reasons(bad)).toEqual([
      'breadcrumbs[0]: must be an object, got null',
      'breadcrumbs[1]: timestamp must be a number of ms since the epoch',
      'breadcrumbs[2]: category must be a string, got nothing',
      'breadcrumbs[3]: message longer than 1024 characters (1025)',
      'breadcrumbs[4]: message must be a string, got a number',
      'breadcrumbs[5]: level must be one of fatal, error, warning, info, debug; info used',
      'breadcrumbs[5].data: must be an object, got an array',
      'breadcrumbs[6].data: 1 reserved key(s) removed',
    ]);

    const heavy = Array.from({ length: 100 }, (_, i) => ({ timestamp: i, category: 'log', message: 'y'.repeat(1000) }));
    const h = boundCrashContext({ breadcrumbs: heavy }, true);
    expect(Buffer.byteLength(JSON.stringify(h.breadcrumbs))).toBeLessThanOrEqual(LIMITS.breadcrumbsBytes);
    expect(h.breadcrumbs.at(-1)!.timestamp).toBe(99);
    expect(h.breadcrumbs.length).toBeGreaterThan(25);
    expect(reasons(h)[0]).toMatch(/^breadcrumbs: larger than 32768 bytes as JSON: the oldest \d+ dropped$/);
  });

  it('a flood of bad values yields a bounded list of reasons', () => {
    const r = boundCrashContext({ breadcrumbs: Array.from({ length: 100 }, () => 1), tags: 'x', level: 'nope' }, false);
    expect(r.dropped).toHaveLength(LIMITS.dropped + 1);
    expect(r.dropped.at(-1)).toEqual({ field: '*', reason: '82 more reason(s) not kept' });
    expect(r.level).toBe('error');
  });

  it('huge strings are refused by length before any pattern runs (linear time)', () => {
    const huge = `${'a'.repeat(4_000_000)}!`;
    const r = boundCrashContext({ environment: huge, tags: { k: huge } }, true);
    expect(r.environment).toBe('');
    expect(r.tags).toEqual({});
  });

  it('lone surrogates become U+FFFD (ClickHouse refuses them)', () => {
    const r = boundCrashContext(
      {
        userId: 'a\ud800b',
        tags: { k: 'x\udc00' },
        breadcrumbs: [{ timestamp: 1, category: 'c', message: '\ud83d' }],
      },
      true,
    );

    expect(r.userId).toBe('a\uFFFDb');
    expect(r.tags.k).toBe('x\uFFFD');
    expect(r.breadcrumbs[0]!.message).toBe('\uFFFD');
  });
});
