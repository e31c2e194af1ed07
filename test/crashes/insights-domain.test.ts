import { describe, expect, it } from 'vitest';
import { MIN_SUSPECT_COUNT, rankSuspects, wilson, type DimensionCounts } from '../../src/domain/suspects.ts';
import {
  commonTrails,
  hostPath,
  stepOf,
  trailOf,
  type RawStep,
  type TrailWindow,
} from '../../src/domain/crashTrail.ts';

const dim = (
  dimension: string,
  groupTotal: number,
  group: Record<string, number>,
  baselineTotal: number,
  baseline: Record<string, number>,
): DimensionCounts => ({
  dimension,
  baselineUnit: 'sessions',
  groupTotal,
  baselineTotal,
  group: new Map(Object.entries(group)),
  baseline: new Map(Object.entries(baseline)),
});

describe('wilson', () => {
  it('matches the textbook interval', () => {
    // 8 of 10: 0.4902 … 0.9433 (Wilson 1927, as tabulated by Newcombe 1998)
    const w = wilson(8, 10);
    expect(w.low).toBeCloseTo(0.4902, 3);
    expect(w.high).toBeCloseTo(0.9433, 3);
    expect(wilson(0, 10).low).toBe(0);
    expect(wilson(0, 10).high).toBeGreaterThan(0);
    expect(wilson(10, 10).high).toBeCloseTo(1, 9);
    expect(wilson(0, 0)).toEqual({ low: 0, high: 1 });
  });

  it('narrows as the sample grows', () => {
    const small = wilson(50, 100);
    const big = wilson(5000, 10000);
    expect(big.high - big.low).toBeLessThan(small.high - small.low);
  });
});

describe('rankSuspects', () => {
  it('ranks a planted over-represented value first and leaves a value common in both out', () => {
    const ranked = rankSuspects([
      // Android 14 is 10 % of the baseline but 60 % of the group; Android 13 is common in both
      dim('osVersion', 1000, { 'Android 14': 600, 'Android 13': 400 }, 100_000, {
        'Android 14': 10_000,
        'Android 13': 60_000,
        'iOS 17': 30_000,
      }),
      // release 2.0 a little over-represented
      dim('release', 1000, { '2.0': 450, '1.9': 550 }, 100_000, { '2.0': 35_000, '1.9': 65_000 }),
      // wifi is as common in the group as everywhere
      dim('networkType', 1000, { wifi: 700, cellular: 300 }, 100_000, { wifi: 70_000, cellular: 30_000 }),
    ]);
    expect(ranked[0]).toMatchObject({ dimension: 'osVersion', value: 'Android 14', groupCount: 600 });
    expect(ranked[0]!.lift).toBeCloseTo(6, 5);
    expect(ranked[0]!.liftLow).toBeGreaterThan(1);
    expect(ranked[0]!.liftLow).toBeLessThan(ranked[0]!.lift!);
    expect(ranked.map((s) => s.value)).toEqual(['Android 14', '2.0']);
    for (const s of ranked) expect(s.liftLow).toBeGreaterThan(1);
  });

  it('does not let a handful of occurrences outrank a large, solid lift', () => {
    const ranked = rankSuspects([
      // 3 of 3 on a model 10 % of the baseline: lift 10, but from three reports
      dim('model', 3, { 'Pixel 2': 3 }, 100_000, { 'Pixel 2': 10_000 }),
      // 5000 of 10000 on a release 10 % of the baseline: lift 5 from thousands of reports
      dim('release', 10_000, { '3.1': 5000 }, 100_000, { '3.1': 10_000 }),
    ]);
    expect(ranked.map((s) => [s.value, s.lift])).toEqual([
      ['3.1', 5],
      ['Pixel 2', 10],
    ]);
  });

  it('handles tiny counts, unseen baseline values, empty totals and ties', () => {
    expect(rankSuspects([dim('model', 2, { X: 2 }, 1000, { X: 1 })])).toEqual([]); // below the minimum count
    expect(MIN_SUSPECT_COUNT).toBe(3);
    const unseen = rankSuspects([dim('model', 10, { X: 10 }, 1000, {})]);
    expect(unseen[0]).toMatchObject({ value: 'X', lift: null, baselineCount: 0 });
    expect(Number.isFinite(unseen[0]!.liftLow)).toBe(true);
    expect(rankSuspects([dim('model', 0, {}, 1000, { X: 1 }), dim('os', 5, { A: 5 }, 0, {})])).toEqual([]);
    const tie = rankSuspects([dim('b', 100, { v: 50 }, 1000, { v: 10 }), dim('a', 100, { v: 50 }, 1000, { v: 10 })]);
    expect(tie.map((s) => s.dimension)).toEqual(['a', 'b']);
  });

  it('clamps a count above its total (sketch totals) and caps the list', () => {
    const r = rankSuspects([dim('release', 10, { a: 12 }, 100, { a: 1 })]);
    expect(r[0]!.groupShare).toBe(1);
    const many = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`v${i}`, 10]));
    expect(rankSuspects([dim('tag:x', 800, many, 1_000_000, {})], 50)).toHaveLength(50);
  });
});

describe('the trail before the crash', () => {
  it('labels steps, collapsing ids and numbers in paths and dropping query strings', () => {
    expect(hostPath('https://user:pw@api.example.com:8443/v2/orders/1042?token=abc#x')).toBe(
      'api.example.com:8443/v2/orders/1042',
    );
    expect(hostPath('/relative/path?q')).toBe('/relative/path');
    expect(
      stepOf({ kind: 'request', text: 'https://api.example.com/v2/orders/1042?x=1', method: 'post', status: 500 }),
    ).toEqual({ kind: 'request', label: 'POST api.example.com/v2/orders/<n> → 500' });
    const uuidUrl = 'https://a.io/u/0b7c3e2a-1f4d-4b5e-9c1a-2d3e4f5a6b7c';
    expect(stepOf({ kind: 'request', text: uuidUrl, method: 'GET', status: null }).label).toBe(
      'GET a.io/u/<uuid> → error',
    );
    expect(stepOf({ kind: 'screen', text: '/product/77' })).toEqual({ kind: 'screen', label: '/product/<n>' });
    expect(stepOf({ kind: 'tap', text: '' }).label).toBe('(unnamed)');
  });

  it('reads hostile text in bounded time', () => {
    const long = `https://${'a/'.repeat(200_000)}?${'1'.repeat(100_000)}`;
    const s = stepOf({ kind: 'request', text: long, method: 'GET'.repeat(1000), status: 500 });
    expect(s.label.length).toBeLessThan(500);
  });

  it('keeps the last k steps with consecutive repeats collapsed', () => {
    const raw: RawStep[] = [
      { kind: 'screen', text: 'Home' },
      { kind: 'tap', text: 'buy' },
      { kind: 'tap', text: 'buy' },
      { kind: 'tap', text: 'buy' },
      { kind: 'screen', text: 'Cart' },
      { kind: 'event', text: 'checkout_started' },
    ];
    expect(trailOf(raw, 3).map((s) => s.label)).toEqual(['buy', 'Cart', 'checkout_started']);
    expect(trailOf(raw, 10).map((s) => s.label)).toEqual(['Home', 'buy', 'Cart', 'checkout_started']);
  });

  it('counts the most common trail first, with its share and the latest session that followed it', () => {
    const pay = (url: string): RawStep[] => [
      { kind: 'screen', text: 'Cart' },
      { kind: 'request', text: url, method: 'POST', status: 502 },
    ];
    const failing = pay('https://api.x.io/pay/1');
    const failing2 = pay('https://api.x.io/pay/99?r=2');
    const windows: TrailWindow[] = [
      { sessionId: 's1', occurredAt: 1, steps: failing },
      { sessionId: 's2', occurredAt: 5, steps: failing2 },
      { sessionId: 's3', occurredAt: 3, steps: failing },
      { sessionId: 's4', occurredAt: 9, steps: [{ kind: 'screen', text: 'Home' }] },
      { sessionId: 's5', occurredAt: 2, steps: [] },
    ];
    const r = commonTrails(windows, 5);
    expect(r.sampled).toBe(5);
    expect(r.withoutEvents).toBe(1);
    expect(r.trails[0]).toMatchObject({ occurrences: 3, share: 0.6, sessionId: 's2', occurredAt: 5 });
    expect(r.trails[0]!.steps.map((s) => s.label)).toEqual(['Cart', 'POST api.x.io/pay/<n> → 502']);
    expect(r.trails[1]).toMatchObject({ occurrences: 1, sessionId: 's4' });
    expect(commonTrails([], 5)).toEqual({ sampled: 0, withoutEvents: 0, trails: [] });
  });
});
