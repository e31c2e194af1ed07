import { describe, expect, it } from 'vitest';
import { adoptionEnd, BADGE_MS, buckets, crashFree, groupBadge, HOUR_MS, percent, userKey } from '../src/domain/releaseHealth.ts';

// The release-health rules (src/domain/releaseHealth.ts), directly.

const DAY = 86_400_000;

describe('release health rules', () => {
  it('counts a user by id, else by device, never mixing the two', () => {
    expect(userKey('42', 'f')).toBe('user:42');
    expect(userKey(null, 'f')).toBe('device:f');
    expect(userKey('', 'f')).toBe('device:f');
    expect(userKey('device:f', 'x')).not.toBe(userKey(null, 'f'));
  });

  it('crash-free is the share without a fatal crash, to three decimals; null without sessions', () => {
    expect(crashFree(4, 1)).toBe(75);
    expect(crashFree(3, 1)).toBe(66.667);
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
    expect(groupBadge({ status: 'open', firstSeenAt: old, regressedAt: now - DAY, movedByHandAt: now - 2 * DAY }, now)).toBe('regressed');
    expect(groupBadge({ status: 'open', firstSeenAt: old, regressedAt: now - DAY, movedByHandAt: now - HOUR_MS }, now)).toBeNull();
    expect(groupBadge({ status: 'resolved', firstSeenAt: old, regressedAt: now - DAY, movedByHandAt: null }, now)).toBeNull();
    expect(groupBadge({ status: 'open', firstSeenAt: old, regressedAt: now - BADGE_MS, movedByHandAt: null }, now)).toBeNull();
    expect(groupBadge({ status: 'open', firstSeenAt: now - DAY, regressedAt: null, movedByHandAt: null }, now)).toBe('new');
    expect(groupBadge({ status: 'ignored', firstSeenAt: now - DAY, regressedAt: null, movedByHandAt: now }, now)).toBe('new');
    expect(groupBadge({ status: 'open', firstSeenAt: now - BADGE_MS, regressedAt: null, movedByHandAt: null }, now)).toBeNull();
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
});
