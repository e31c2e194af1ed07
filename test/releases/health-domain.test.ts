import { describe, expect, it } from 'vitest';
import {
  adoptionEnd,
  BADGE_MS,
  buckets,
  compareVersions,
  crashFree,
  crashFreeInterval,
  groupBadge,
  HOUR_MS,
  percent,
  planDays,
  previousVersions,
  significanceGap,
  significantlyWorse,
  userKey,
  wilson,
} from '../../src/domain/releaseHealth.ts';
import { breaches, describeFiring, regressionMeasures } from '../../src/domain/alertRules.ts';

// The release-health rules (src/domain/releaseHealth.ts), directly.

const DAY = 86_400_000;

describe('release health rules', () => {
  it('counts a user by id, else by device, never mixing the two', () => {
    expect(userKey('42', 'f')).toBe('user:42');
    expect(userKey(null, 'f')).toBe('device:f');
    expect(userKey('', 'f')).toBe('device:f');
    expect(userKey('device:f', 'x')).not.toBe(userKey(null, 'f'));
  });

  it('crash-free is the share without a fatal crash, to two decimals; null without sessions', () => {
    expect(crashFree(4, 1)).toBe(75);
    expect(crashFree(3, 1)).toBe(66.67);
    expect(crashFree(1000, 1)).toBe(99.9);
    expect(crashFree(100_000, 1)).toBe(100); // 99.999 shows as 100 at two decimals
    expect(crashFree(10_000, 5)).toBe(99.95);
    expect(crashFree(2, 0)).toBe(100);
    expect(crashFree(1, 3)).toBe(0); // an approximate count never makes it negative
    expect(crashFree(0, 0)).toBeNull();
    expect(percent(1, 8)).toBe(12.5);
    expect(percent(1, 0)).toBeNull();
  });

  it('measures adoption up to the end of the range, or now', () => {
    const now = Date.UTC(2026, 0, 10, 12, 30);
    expect(adoptionEnd(Date.UTC(2026, 0, 5), now)).toBe(Date.UTC(2026, 0, 5));
    expect(adoptionEnd(Date.UTC(2026, 1, 1), now)).toBe(Date.UTC(2026, 0, 10, 13)); // the current hour counts
  });

  it('badges a group regressed while nobody moved it since, else new for its first 7 days', () => {
    const now = Date.UTC(2026, 0, 20);
    const old = now - 30 * DAY;
    expect(
      groupBadge({ status: 'open', firstSeenAt: old, regressedAt: now - DAY, movedByHandAt: now - 2 * DAY }, now),
    ).toBe('regressed');
    expect(
      groupBadge({ status: 'open', firstSeenAt: old, regressedAt: now - DAY, movedByHandAt: now - HOUR_MS }, now),
    ).toBeNull();
    expect(
      groupBadge({ status: 'resolved', firstSeenAt: old, regressedAt: now - DAY, movedByHandAt: null }, now),
    ).toBeNull();
    expect(
      groupBadge({ status: 'open', firstSeenAt: old, regressedAt: now - BADGE_MS, movedByHandAt: null }, now),
    ).toBeNull();
    expect(groupBadge({ status: 'open', firstSeenAt: now - DAY, regressedAt: null, movedByHandAt: null }, now)).toBe(
      'new',
    );
    expect(groupBadge({ status: 'ignored', firstSeenAt: now - DAY, regressedAt: null, movedByHandAt: now }, now)).toBe(
      'new',
    );
    expect(
      groupBadge({ status: 'open', firstSeenAt: now - BADGE_MS, regressedAt: null, movedByHandAt: null }, now),
    ).toBeNull();
  });

  it('cuts a chart into hours or UTC days ending with the current one', () => {
    const now = Date.UTC(2026, 0, 20, 15, 45);
    const h = buckets('24h', now);
    expect(h).toHaveLength(24);
    expect(h.at(-1)).toBe(Date.UTC(2026, 0, 20, 15));
    expect(h[0]).toBe(Date.UTC(2026, 0, 19, 16));
    const d = buckets('14d', now);
    expect(d).toHaveLength(14);
    expect([d[0], d.at(-1)]).toEqual([Date.UTC(2026, 0, 7), Date.UTC(2026, 0, 20)]);
    expect(buckets('90d', now)).toHaveLength(90);
  });

  it('orders versions as semver: numbers as numbers, a pre-release before its release, no version first', () => {
    const sorted = [
      '1.10.0',
      '1.9.0',
      '2.0.0',
      '2.0.0-beta.2',
      '2.0.0-beta.10',
      '2.0.0-alpha',
      '',
      '1.9',
      '1.9.0+42',
      'build-x',
    ].sort(compareVersions);
    expect(sorted).toEqual([
      '',
      '1.9',
      '1.9.0',
      '1.9.0+42',
      '1.10.0',
      '2.0.0-alpha',
      '2.0.0-beta.2',
      '2.0.0-beta.10',
      '2.0.0',
      'build-x',
    ]);
    expect(compareVersions(null, '1.0')).toBeLessThan(0);
    expect(compareVersions('1.0', '1.0')).toBe(0);
    expect(compareVersions('10', '9')).toBeGreaterThan(0);
    // linear on long input
    expect(compareVersions(`${'1.'.repeat(50_000)}2`, `${'1.'.repeat(50_000)}1`)).toBeGreaterThan(0);
    expect(previousVersions(['2.0.0', '1.10.0', '1.9.0', ''])).toEqual(
      new Map([
        ['1.10.0', '1.9.0'],
        ['2.0.0', '1.10.0'],
      ]),
    );
  });

  it('gives the 95 % Wilson score interval, inside [0, 100], wide for few sessions and narrow for many', () => {
    // Reference values (Wilson 1927; e.g. statsmodels proportion_confint(method="wilson")).
    expect(wilson(8, 10)).toEqual({ low: 49.01, high: 94.34 });
    expect(wilson(10, 10)).toEqual({ low: 72.24, high: 100 });
    expect(wilson(0, 10)).toEqual({ low: 0, high: 27.76 });
    expect(wilson(990, 1000)).toEqual({ low: 98.16, high: 99.46 });
    expect(wilson(1, 0)).toBeNull();
    expect(crashFreeInterval(4, 1)).toEqual(wilson(3, 4));
    expect(crashFreeInterval(4, 9)).toEqual(wilson(0, 4)); // never more crashed than sessions
    const few = crashFreeInterval(20, 2)!;
    const many = crashFreeInterval(20_000, 2_000)!;
    expect(few.high - few.low).toBeGreaterThan(many.high - many.low);
  });

  it('marks a release significantly worse only when its interval lies wholly below the previous one', () => {
    const previous = crashFreeInterval(1000, 10); // 99 %
    // a small early rollout at 90 %: overlapping, not an alarm
    expect(significantlyWorse(crashFreeInterval(10, 1), previous)).toBe(false);
    // the same rate over many sessions: significant
    expect(significantlyWorse(crashFreeInterval(800, 100), previous)).toBe(true);
    // better is never worse; equal figures are not
    expect(significantlyWorse(crashFreeInterval(1000, 0), previous)).toBe(false);
    expect(significantlyWorse(crashFreeInterval(1000, 10), previous)).toBe(false);
    expect(significantlyWorse(null, previous)).toBe(false);
    expect(significanceGap(crashFreeInterval(800, 100), previous)).toBeGreaterThan(0);
    expect(significanceGap(crashFreeInterval(10, 1), previous)).toBeLessThan(0);
  });

  it('the regression rule measures each release against the previous judged one, firing only on a gap', () => {
    const m = regressionMeasures(
      [
        { appVersion: '1.10.0', sessions: 20, crashed: 9 },
        { appVersion: '1.9.0', sessions: 40, crashed: 0 },
        { appVersion: '1.11.0-beta.1', sessions: 10, crashed: 1 },
        { appVersion: '1.8.0', sessions: 5, crashed: 5 }, // under the minimum: not judged, nobody's previous
        { appVersion: '', sessions: 100, crashed: 50 }, // no version: not a release
      ],
      10,
    );
    expect(m.map((x) => x.subject)).toEqual(['1.10.0', '1.11.0-beta.1']);
    const [worse, beta] = m;
    expect(worse!.value).toBeGreaterThan(0);
    expect(breaches('crash_free_regression', 0, worse!.value)).toBe(true);
    expect(breaches('crash_free_regression', 50, worse!.value)).toBe(false); // a wider gap asked for
    expect(worse!.detail).toBe(
      'crash-free sessions of release 1.10.0 are 55% (95 % interval 34.2–74.19%, 20 sessions), ' +
        'significantly below release 1.9.0 at 100% (91.23–100%, 40 sessions)',
    );
    // 90 % over 10 sessions after 55 %: better, no breach
    expect(breaches('crash_free_regression', 0, beta!.value)).toBe(false);
    expect(
      describeFiring(
        { kind: 'crash_free_regression', name: 'Watch', threshold: 0, windowMinutes: 60 },
        { subject: '1.10.0', value: 1, detail: worse!.detail },
      ),
    ).toBe(`Watch: ${worse!.detail} in 60 min`);
  });
});

describe('planDays: which days the Releases page reads from kept counts', () => {
  const DAY = 86_400_000;
  const now = Date.parse('2026-12-06T12:00:00Z');
  const Q = 600_000;
  const days = ['2026-12-03', '2026-12-04', '2026-12-05', '2026-12-06'];

  it('keeps a day once it has been over and untouched for the quiet time, never today', () => {
    const state = new Map([
      ['2026-12-03', { touchedAt: now - 2 * DAY }],
      ['2026-12-04', { touchedAt: now - Q + 1 }], // a late fact moments ago
      ['2026-12-06', { touchedAt: now - 3 * Q }], // quiet, but the day is not over
    ]);
    // 2026-12-05 has no fact at all: over, so kept as a day without sessions
    expect(planDays(days, state, now, Q)).toEqual({
      kept: [],
      counted: days,
      toKeep: ['2026-12-03', '2026-12-05'],
    });
    // yesterday ended 12 h ago: with a quiet time longer than that it is not kept yet
    expect(planDays(['2026-12-05'], new Map(), now, 13 * 3_600_000).toKeep).toEqual([]);
  });

  it('reads kept counts while no fact touched the day since, and counts rows again once one did', () => {
    const countedAt = now - DAY;
    const state = new Map([
      ['2026-12-03', { touchedAt: countedAt - Q - 1, countedAt }],
      ['2026-12-04', { touchedAt: now - 5_000, countedAt }], // a late crash fact this morning
      ['2026-12-05', { countedAt }],
    ]);
    expect(planDays(days, state, now, Q)).toEqual({
      kept: ['2026-12-03', '2026-12-05'],
      counted: ['2026-12-04', '2026-12-06'],
      toKeep: [],
    });
  });

  it('takes a touch just before the count as one that may have missed it', () => {
    // an insert whose touch is younger than the quiet time before the count may have committed
    // after the count read the rows: the counts are not trusted
    const countedAt = now - DAY;
    const state = new Map([['2026-12-03', { touchedAt: countedAt - Q + 1, countedAt }]]);
    expect(planDays(['2026-12-03'], state, now, Q)).toEqual({
      kept: [],
      counted: ['2026-12-03'],
      toKeep: ['2026-12-03'],
    });
  });
});
