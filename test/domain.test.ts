import { describe, expect, it } from 'vitest';
import { mayHoldHugeNumber } from '../src/lib/jsonScan.ts';
import { createHash } from 'node:crypto';
import { generateApiKey, hashApiKey, isWellFormedApiKey, KEY_PREFIX, visiblePrefix } from '../src/domain/apiKey.ts';
import { crashGroupKey, crashOccurrenceId, deviceFingerprint, stackHead } from '../src/domain/crashGrouping.ts';
import {
  decideEnd,
  isFailedNetworkEvent,
  isNetworkError,
  statusAfterCrash,
  statusAfterEnd,
  statusSetByCrash,
} from '../src/domain/sessionState.ts';
import { recipientRows } from '../src/domain/alertRecipients.ts';
import { thresholdProblem } from '../src/domain/alertRules.ts';
import { deferDelayMs, MIN_DEFER_MS } from '../src/domain/outboxBackoff.ts';
import { allowedTransitions, canTransition, statusAfterOccurrence } from '../src/domain/crashGroupStatus.ts';
import { summaryView } from '../src/domain/crashSummary.ts';
import { derivedId, eventId, uuidV5 } from '../src/domain/ids.ts';
import { DateParamError, parseIsoDate } from '../src/domain/exportParams.ts';
import { BoundedMap } from '../src/lib/boundedMap.ts';
import { DAY_MS, utcDay, utcDayStart, utcDaysOf } from '../src/lib/time.ts';

describe('API keys', () => {
  it('have the prefix, 32 + 6 base62 characters and a valid checksum', () => {
    const k = generateApiKey();
    expect(k.startsWith(KEY_PREFIX)).toBe(true);
    expect(k).toMatch(/^frk_[0-9A-Za-z]{38}$/);
    expect(isWellFormedApiKey(k)).toBe(true);
  });
  it('refuse a mistyped character, a truncation and a foreign prefix', () => {
    const k = generateApiKey();
    const i = 10;
    const typo = k.slice(0, i) + (k[i] === 'a' ? 'b' : 'a') + k.slice(i + 1);
    expect(isWellFormedApiKey(typo)).toBe(false);
    expect(isWellFormedApiKey(k.slice(0, -1))).toBe(false);
    expect(isWellFormedApiKey(`sk_${k.slice(4)}`)).toBe(false);
    expect(isWellFormedApiKey('')).toBe(false);
  });
  it('are stored as SHA-256 hex', () => {
    expect(hashApiKey('frk_x')).toBe(createHash('sha256').update('frk_x').digest('hex'));
  });
});

describe('crash grouping', () => {
  const sha = (s: string) => createHash('sha256').update(s).digest('hex');
  it('keys on the first five lines only', () => {
    const a = 'l1\nl2\nl3\nl4\nl5\nl6-a';
    const b = 'l1\nl2\nl3\nl4\nl5\nl6-b\nl7';
    expect(crashGroupKey(a)).toBe(crashGroupKey(b));
    expect(crashGroupKey(a)).toBe(sha('l1\nl2\nl3\nl4\nl5'));
    expect(crashGroupKey('l1\nl2\nl3\nl4\nX')).not.toBe(crashGroupKey(a));
  });
  it('stores as the stack head exactly the lines it groups on', () => {
    expect(stackHead('l1\r\nl2\nl3\nl4\nl5\nl6')).toBe('l1\nl2\nl3\nl4\nl5');
    expect(crashGroupKey('l1\r\nl2\nl3\nl4\nl5\nl6')).toBe(sha(stackHead('l1\nl2\nl3\nl4\nl5')));
  });
  it('ignores CRLF line endings and takes all lines when fewer than five', () => {
    expect(crashGroupKey('l1\r\nl2\r\nl3')).toBe(crashGroupKey('l1\nl2\nl3'));
    expect(crashGroupKey('only')).toBe(sha('only'));
  });
  it('identifies an occurrence by its whole payload', () => {
    const c = { sessionId: 's', message: 'm', stackTrace: 't', isFatal: true, handled: false, timestamp: 1 };
    expect(crashOccurrenceId(c)).toBe(crashOccurrenceId({ ...c }));
    expect(crashOccurrenceId({ ...c, timestamp: 2 })).not.toBe(crashOccurrenceId(c));
    expect(crashOccurrenceId({ ...c, handled: true })).not.toBe(crashOccurrenceId(c));
  });
  it('fingerprints a device by its traits, not its app version', () => {
    const d = {
      platform: 'ios',
      brand: 'Apple',
      model: 'X',
      osVersion: '17',
      screenWidth: 1,
      screenHeight: 2,
      locale: 'en',
      timezone: 'UTC',
    };
    expect(deviceFingerprint(d)).toBe(deviceFingerprint({ ...d }));
    expect(deviceFingerprint({ ...d, model: 'Y' })).not.toBe(deviceFingerprint(d));
  });
});

describe('session state machine', () => {
  it('ends active as completed and never downgrades crashed', () => {
    expect(statusAfterEnd('active')).toBe('completed');
    expect(statusAfterEnd('crashed')).toBe('crashed');
    expect(statusAfterEnd('completed')).toBe('completed');
  });
  it('crashes only on a fatal crash', () => {
    expect(statusAfterCrash('active', true)).toBe('crashed');
    expect(statusAfterCrash('active', false)).toBe('active');
    expect(statusAfterCrash('completed', true)).toBe('crashed');
  });
  it('keeps the first accepted end and refuses an end before the start', () => {
    expect(decideEnd({ startedAt: 10, endedAt: null }, 20)).toBe('apply');
    expect(decideEnd({ startedAt: 10, endedAt: 20 }, 30)).toBe('ignore');
    expect(decideEnd({ startedAt: 10, endedAt: null }, 5)).toBe('before-start');
    expect(decideEnd({ startedAt: 10, endedAt: null }, 10)).toBe('apply');
  });
  it('counts statusCode >= 400 or any error as a network error', () => {
    expect(isNetworkError({ statusCode: 399 })).toBe(false);
    expect(isNetworkError({ statusCode: 400 })).toBe(true);
    expect(isNetworkError({ error: 'timeout' })).toBe(true);
    expect(isNetworkError({ statusCode: 200, error: null })).toBe(false);
    expect(isNetworkError({})).toBe(false);
  });
});

describe('crash summary shown on the dashboard', () => {
  const current = {
    message: 'NSRangeException',
    stackHead: 'at A.run (A.swift:1)\nat B.go (B.swift:2)',
    isFatal: true,
    handled: false,
    appVersion: '2.1',
    appBuildNumber: null,
    platform: 'ios',
    osVersion: '17.4',
    deviceModel: 'iPhone15,2',
    deviceBrand: 'Apple',
  };
  it('rebuilds the deterministic summary from the group as it is now, and says so', () => {
    const v = summaryView(
      { summary: 'Handled exception: "NSRangeException" …', summarySource: 'deterministic', summaryAt: null },
      current,
    );
    expect(v).toEqual({
      origin: 'stack-trace',
      model: null,
      writtenAt: null,
      text: 'Fatal crash: "NSRangeException" in A.run (A.swift:1), called from B.go (B.swift:2). Latest on ios 17.4, Apple iPhone15,2, app 2.1.',
    });
    expect(summaryView({ summary: null, summarySource: null, summaryAt: null }, current).origin).toBe('stack-trace');
  });
  it('keeps an AI summary as written, with its model and time', () => {
    expect(
      summaryView(
        { summary: 'Index past the end.', summarySource: 'openai:gpt-4o-mini', summaryAt: '2026-01-01T00:00:00.000Z' },
        current,
      ),
    ).toEqual({
      text: 'Index past the end.',
      origin: 'ai',
      model: 'gpt-4o-mini',
      writtenAt: '2026-01-01T00:00:00.000Z',
    });
  });
  it('shows a key by its first characters only', () => {
    expect(visiblePrefix('frk_ab12cdefghijklmnopqrstuvwxyz0123456789')).toBe('frk_ab12');
  });
});

describe('crash group status', () => {
  it('allows any manual move (docs/decisions.md)', () => {
    // any manual move, open → resolved directly included; staying put is not a transition
    expect(canTransition('open', 'resolved')).toBe(true);
    expect(canTransition('open', 'acknowledged')).toBe(true);
    expect(canTransition('ignored', 'resolved')).toBe(true);
    expect(canTransition('resolved', 'acknowledged')).toBe(true);
    expect(canTransition('open', 'open')).toBe(false);
    expect(allowedTransitions('open')).toEqual(['acknowledged', 'resolved', 'ignored']);
    expect(allowedTransitions('resolved')).toEqual(['open', 'acknowledged', 'ignored']);
  });
  it('reopens a resolved group only for an app version new to the crash', () => {
    expect(statusAfterOccurrence('resolved', '1.0', ['1.0'])).toBe('resolved');
    expect(statusAfterOccurrence('resolved', '1.1', ['1.0'])).toBe('open');
    expect(statusAfterOccurrence('ignored', '1.1', ['1.0'])).toBe('ignored');
    expect(statusAfterOccurrence('acknowledged', '9', [])).toBe('acknowledged');
  });
});

describe('event ids', () => {
  it('makes RFC 4122 v5 UUIDs, stable per (session, sequence)', () => {
    const id = eventId('s-1', 3);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(eventId('s-1', 3)).toBe(id);
    expect(eventId('s-1', 4)).not.toBe(id);
    expect(uuidV5('a')).not.toBe(uuidV5('b'));
  });
  it('keeps the ids already stored: pinned values, short and long (multi-byte) names', () => {
    // Stored rows carry these ids; a retry after an upgrade must map onto them again.
    expect(eventId('s-1', 3)).toBe('0b5818e4-e8e0-5387-87c4-1b8c10eba4e9');
    expect(uuidV5('€'.repeat(100))).toBe('c2c7a351-0ef6-59ce-9ad5-ce33457dc6fa');
  });
});

describe('query dates (the export and the dashboard share one parser)', () => {
  it('refuses a day the month does not have instead of rolling it over', () => {
    expect(() => parseIsoDate('from', '2026-02-30')).toThrow(DateParamError);
    expect(() => parseIsoDate('from', '2026-13-01')).toThrow(DateParamError);
    expect(() => parseIsoDate('to', '2026-02-28T24:00:00Z')).toThrow(DateParamError);
  });
  it('reads dates as UTC days and date-times with their zone', () => {
    expect(parseIsoDate('from', '2026-03-02')).toEqual({ ms: Date.UTC(2026, 2, 2), dateOnly: true });
    expect(parseIsoDate('from', '2028-02-29T12:00:00Z')).toEqual({ ms: Date.UTC(2028, 1, 29, 12), dateOnly: false });
    expect(parseIsoDate('from', '2026-01-31T12:00:00+02:00').ms).toBe(Date.UTC(2026, 0, 31, 10));
    expect(parseIsoDate('from', '2026-01-31T12:00').ms).toBe(Date.UTC(2026, 0, 31, 12));
  });
  it('keys days by their UTC date, from the day an instant falls in up to the end, exclusive', () => {
    expect(utcDay(Date.UTC(2026, 11, 31, 23, 59, 59, 999))).toBe('2026-12-31');
    expect(utcDay(Date.UTC(2027, 0, 1))).toBe('2027-01-01');
    expect(utcDayStart(Date.UTC(2028, 1, 29, 23, 59))).toBe(Date.UTC(2028, 1, 29));
    expect(utcDayStart(Date.UTC(2028, 1, 29))).toBe(Date.UTC(2028, 1, 29));
    expect(utcDaysOf(Date.UTC(2028, 1, 28, 18), Date.UTC(2028, 2, 1))).toEqual(['2028-02-28', '2028-02-29']);
    expect(utcDaysOf(Date.UTC(2028, 1, 28), Date.UTC(2028, 1, 28, 0, 0, 0, 1))).toEqual(['2028-02-28']);
    expect(utcDaysOf(Date.UTC(2028, 1, 28), Date.UTC(2028, 1, 28))).toEqual([]);
    expect(utcDaysOf(0, 0 + 14 * DAY_MS)).toHaveLength(14);
  });
});

describe('numbers beyond a double, found before the parsed body is walked', () => {
  it('says yes for a three-digit exponent or 210 digits in a row (309 less a two-digit exponent), wherever they fall, and no otherwise', () => {
    const pad = (n: number) => 'x'.repeat(n);
    for (const at of [0, 1, 5, 208, 209, 210, 211, 307, 308, 309, 310, 419, 617, 1000]) {
      expect(mayHoldHugeNumber(`${pad(at)}${'9'.repeat(309)}}`), `309 digits at ${at}`).toBe(true);
      expect(mayHoldHugeNumber(`${pad(at)}${'9'.repeat(308)}e1}`), `308 digits e1 at ${at}`).toBe(true);
      expect(mayHoldHugeNumber(`${pad(at)}${'9'.repeat(210)}}`), `210 digits at ${at}`).toBe(true);
      expect(mayHoldHugeNumber(`${pad(at)}${'9'.repeat(209)}}`), `209 digits at ${at}`).toBe(false);
      expect(mayHoldHugeNumber(`${pad(at)}${'9'.repeat(209)}.${'9'.repeat(209)}`), `209 + 209 at ${at}`).toBe(false);
    }
    expect(mayHoldHugeNumber('{"a":1e400}')).toBe(true);
    expect(mayHoldHugeNumber('{"a":[2E+308]}')).toBe(true);
    expect(mayHoldHugeNumber('{"a":1e99,"b":1e-400}')).toBe(false);
    // An exponent is a number's only where a number can stand: after `:`, `,`, `[` or nothing.
    for (const t of ['1e400', '{"a": -1.5e400}', '[1,2E+400]', '{"a":\n\t 1e400}', '{"a":[ -0.5e999 ]}'])
      expect(mayHoldHugeNumber(t), t).toBe(true);
    // Hex ids that hold digit-e-digits (one random UUID in nine) are not numbers: no walk.
    for (const t of [
      '{"id":"9e1234ab-1c2d-4e3f-8a9b-0c1d2e3f4a5b"}',
      '{"sessionId":"0b1c2d3e-4f5a-4b6c-8d7e-ab4e1230ffee","events":[]}',
      '{"requests":[{"id":"5d41402a-bc4b-2a76-b971-9d911017c592-7e500"}]}',
    ])
      expect(mayHoldHugeNumber(t), t).toBe(false);
    expect(
      mayHoldHugeNumber(
        JSON.stringify({
          events: Array.from({ length: 100 }, (_, i) => ({ t: 1767225600000 + i, u: 'https://x/e12' })),
        }),
      ),
    ).toBe(false);
  });
});

describe('the bounded map of the per-process caches', () => {
  it('holds at most max entries, dropping the oldest first; a replaced value keeps its place', () => {
    const m = new BoundedMap<string, number>(3);
    m.set('a', 1).set('b', 2).set('c', 3);
    m.set('a', 10); // replaced, still the oldest
    m.set('d', 4);
    expect([m.has('a'), m.has('b'), m.has('c'), m.has('d')]).toEqual([false, true, true, true]);
    expect(m.size).toBe(3);
    m.delete('b');
    m.set('e', 5); // room again: nothing dropped
    expect([m.get('c'), m.get('d'), m.get('e'), m.size]).toEqual([3, 4, 5, 3]);
  });
});

describe('rules written once (issue 34)', () => {
  it('a crash sets the status the SQL is given: crashed when fatal, else none (the session keeps its own)', () => {
    expect([statusSetByCrash(true), statusSetByCrash(false)]).toEqual(['crashed', null]);
    expect(statusAfterCrash('completed', false)).toBe('completed');
  });

  it('the failed-request verdict over a stored event is the ingest rule over its fields', () => {
    expect(isFailedNetworkEvent({ statusCode: 503 })).toBe(true);
    expect(isFailedNetworkEvent({ statusCode: 200, error: 'reset' })).toBe(true);
    expect(isFailedNetworkEvent({ statusCode: 200 })).toBe(false);
    expect(isFailedNetworkEvent({ statusCode: '500' })).toBe(false);
  });

  it('a derived id keeps the spelling of the ids already stored (variant digit a), and is a UUID', () => {
    expect(derivedId('crash_group.new', '42', 'hook-1')).toBe('2521b6ba-eea5-553f-a2c8-ab67a7b0fc14');
    expect(uuidV5('x')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("confirms at once members' own addresses and what the operator wrote, nothing a member listed before", () => {
    const rows = recipientRows({
      projectList: ['pending@x.io', 'member@x.io'],
      ruleEmails: ['rule@x.io', 'member@x.io'],
      members: ['member@x.io'],
      vouched: ['rule@x.io'],
    });
    expect(rows.list).toEqual(['pending@x.io', 'member@x.io', 'rule@x.io']);
    expect(rows.confirmed).toEqual(['member@x.io', 'rule@x.io']);
    expect(recipientRows({ projectList: null, ruleEmails: [], members: [], vouched: [] })).toEqual({
      list: [],
      confirmed: [],
    });
  });

  it('says what is wrong with a threshold for its kind', () => {
    expect(thresholdProblem('crash_free', 100)).toBeNull();
    expect(thresholdProblem('crash_free', 0)).toMatch(/percentage/);
    expect(thresholdProblem('crash_free_regression', 0)).toBeNull();
    expect(thresholdProblem('crash_free_regression', 100)).toMatch(/gap/);
    expect(thresholdProblem('spike', 1.5)).toMatch(/whole number/);
    expect(thresholdProblem('spike', 3)).toBeNull();
  });

  it('a deferred job waits until its slot frees, never less than the floor', () => {
    expect([deferDelayMs(0), deferDelayMs(-5), deferDelayMs(1200)]).toEqual([MIN_DEFER_MS, MIN_DEFER_MS, 1200]);
  });
});
