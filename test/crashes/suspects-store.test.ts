import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openChdb } from '../../src/stores/clickhouse/chdb.ts';
import { migrateClickHouse } from '../../src/stores/migrations.ts';
import { crashInsightsRepo } from '../../src/repos/crashInsights.ts';

// The suspects' states on the real engine: migration 009 copies what was stored before it
// (sessions for release and platform, occurrences for every dimension), the views keep them
// from then on, and a tag key in any script is found in its baseline.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-suspects-'));
const ch = await openChdb(dir);
afterAll(async () => {
  await ch.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const P = '00000000-0000-4000-8000-0000000000bb';
const sid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const at = (day: number) => `2026-03-0${day} 12:00:00.000`;

const fact = (n: number, day: number, extra: Record<string, string> = {}) => ({
  project_id: P,
  session_id: sid(n),
  started_at: at(day),
  app_version: n % 2 ? '1.0' : '2.0',
  platform: 'android',
  user_key: `u${n}`,
  crashed: 0,
  ...extra,
});
const occurrence = (n: number, day: number, group: string, extra: Record<string, unknown> = {}) => ({
  project_id: P,
  group_key: group,
  id: `${group}-${n}`,
  occurred_at: at(day),
  session_id: sid(n),
  user_id: null,
  device_fingerprint: 'd',
  platform: 'android',
  os_version: '14',
  app_version: n % 2 ? '1.0' : '2.0',
  brand: 'Google',
  model: 'Pixel 8',
  message: 'm',
  stack_trace: 's',
  is_fatal: true,
  handled: false,
  ...extra,
});

describe('crash suspect states', () => {
  it('copies the data stored before migration 009, then follows new rows', async () => {
    const upTo008 = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-mig008-'));
    for (const f of fs.readdirSync('clickhouse').filter((x) => x < '009')) {
      fs.copyFileSync(path.join('clickhouse', f), path.join(upTo008, f));
    }
    await migrateClickHouse(ch, upTo008);
    fs.rmSync(upTo008, { recursive: true, force: true });
    // before 009: ten sessions (no device context in the facts yet) and four occurrences of group g
    await ch.insert(
      'session_facts',
      Array.from({ length: 10 }, (_, n) => fact(n, 1)),
    );
    const island = { environment: 'prod', tags: { région: 'île' } };
    await ch.insert(
      'crash_occurrences',
      [0, 1, 2, 3].map((n) => occurrence(n, 1, 'g', island)),
    );
    await migrateClickHouse(ch);

    // after: ten sessions with their device context, four more occurrences
    await ch.insert(
      'session_facts',
      Array.from({ length: 10 }, (_, n) =>
        fact(100 + n, 2, {
          os_version: n < 2 ? '14' : '13',
          brand: 'Google',
          model: 'Pixel 8',
          network_type: 'wifi',
        }),
      ),
    );
    await ch.insert(
      'crash_occurrences',
      [100, 101, 102, 103].map((n) =>
        occurrence(n, 2, 'g', {
          network_type: 'wifi',
          environment: 'prod',
          tags: { région: 'île' },
        }),
      ),
    );
    const coast = { environment: 'prod', tags: { région: 'côte' } };
    await ch.insert(
      'crash_occurrences',
      [104, 105].map((n) => occurrence(n, 2, 'other', coast)),
    );

    const c = await crashInsightsRepo(ch).suspectCounts(P, 'g', 30);
    expect(c.days).toEqual(['2026-03-01', '2026-03-02']);
    expect(c.groupOccurrences).toBe(8);
    const dim = (d: string) => c.dimensions.find((x) => x.dimension === d)!;
    // release: every session of both days, the copied ones included
    expect(dim('release')).toMatchObject({ groupTotal: 8, baselineTotal: 20, baselineUnit: 'sessions' });
    expect(dim('release').baseline.get('1.0')).toBe(10);
    // OS: only the sessions that reported one (those started after the migration)
    expect(dim('osVersion')).toMatchObject({ groupTotal: 8, baselineTotal: 10 });
    expect(dim('osVersion').group.get('android 14')).toBe(8);
    expect(dim('osVersion').baseline.get('android 14')).toBe(2);
    expect(dim('networkType')).toMatchObject({ groupTotal: 4, baselineTotal: 10 });
    // a tag key outside ASCII, against the project's occurrences of both groups
    expect(dim('tag:région')).toMatchObject({ groupTotal: 8, baselineTotal: 10, baselineUnit: 'occurrences' });
    expect(dim('tag:région').baseline.get('île')).toBe(8);
    expect(dim('environment').baseline.get('prod')).toBe(10);
  });

  it('reads the period back from the last occurrence, and nothing for an unknown group', async () => {
    const one = await crashInsightsRepo(ch).suspectCounts(P, 'g', 1);
    expect(one.days).toEqual(['2026-03-02']);
    expect(one.groupOccurrences).toBe(4);
    expect(await crashInsightsRepo(ch).suspectCounts(P, 'none', 30)).toEqual({
      days: [],
      from: null,
      to: null,
      groupOccurrences: 0,
      dimensions: [],
    });
    const windows = await crashInsightsRepo(ch).trailWindows(P, 'none', { windowSeconds: 30, sample: 10, rawSteps: 5 });
    expect(windows).toEqual([]);
  });
});
