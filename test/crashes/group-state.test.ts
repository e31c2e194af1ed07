import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openChdb } from '../../src/stores/clickhouse/chdb.ts';
import { migrateClickHouse } from '../../src/stores/migrations.ts';
import { crashOccurrencesRepo } from '../../src/repos/crashOccurrences.ts';
import { QueueBudget } from '../../src/stores/clickhouse/batcher.ts';

// The crash page's state (clickhouse/011, moved by 012) on the real engine: migration 011 copies
// the occurrences stored before it, 012 copies 011's state, the view follows new ones, and the page's figures read from
// it are those the occurrences give, a retried report (a second physical row) counted once.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-group-state-'));
const ch = await openChdb(dir);
afterAll(async () => {
  await ch.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const P = '00000000-0000-4000-8000-0000000000cc';
const sid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const occurrence = (n: number, day: number, extra: Record<string, unknown> = {}) => ({
  project_id: P,
  group_key: 'g',
  id: `g-${n}`,
  occurred_at: `2026-03-0${day} 12:00:${String(n % 60).padStart(2, '0')}.000`,
  session_id: sid(n),
  user_id: n % 3 ? `user-${n % 4}` : null,
  device_fingerprint: `device-${n % 5}`,
  platform: n % 2 ? 'android' : 'ios',
  os_version: n % 2 ? '14' : '17.1',
  app_version: n % 4 ? '1.0' : '2.0',
  brand: n % 2 ? 'Google' : 'Apple',
  model: n % 2 ? 'Pixel 8' : 'iPhone15,2',
  message: 'm',
  stack_trace: `s${n}`,
  is_fatal: n % 7 !== 0,
  handled: false,
  environment: n % 3 ? 'production' : 'staging',
  ...extra,
});

// Each figure of the page as the occurrences give it, the state aside (a tag scope reads them).
const anyTag = (repo: ReturnType<typeof crashOccurrencesRepo>, only: { environment?: string } = {}) =>
  Promise.all([
    repo.factsOf(P, [['g']], { ...only, tag: { key: 'none', value: '' } }),
    repo.pageFacts(P, ['g'], { ...only, tag: { key: 'none', value: '' } }),
    repo.breakdown(P, ['g'], { ...only, tag: { key: 'none', value: '' } }),
  ]);

describe('the crash page state', () => {
  const repo = crashOccurrencesRepo(ch, new QueueBudget(1_000_000));

  it('copies the occurrences stored before migration 011 and the state 011 kept into 012, follows new ones, and counts a retried report once', async () => {
    const migrateBefore = async (version: string) => {
      const upTo = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-mig-'));
      for (const f of fs.readdirSync('clickhouse').filter((x) => x < version)) {
        fs.copyFileSync(path.join('clickhouse', f), path.join(upTo, f));
      }
      await migrateClickHouse(ch, upTo);
      fs.rmSync(upTo, { recursive: true, force: true });
    };
    await migrateBefore('011');
    // no tag in the old rows: the tag scope "none = ''" matches them all
    await ch.insert(
      'crash_occurrences',
      [1, 2, 3].map((n) => occurrence(n, 1)),
    );
    // 011's state (crash_group_daily) holds these; 012 copies it to its finer-indexed table
    await migrateBefore('012');
    await ch.insert(
      'crash_occurrences',
      [4, 5, 6].map((n) => occurrence(n, 1)),
    );
    await migrateClickHouse(ch);
    await ch.insert(
      'crash_occurrences',
      [7, 8, 9, 10, 11, 12].map((n) => occurrence(n, 2)),
    );
    // a retried report (the same id) of each day, as a second physical row
    await ch.insert('crash_occurrences', [occurrence(3, 1), occurrence(8, 2)]);

    const facts = (await repo.factsOf(P, [['g']])).get('g');
    expect(facts).toMatchObject({
      occurrences: 12,
      devices: 5,
      users: 4,
      firstSeen: Date.parse('2026-03-01T12:00:01Z'),
      lastSeen: Date.parse('2026-03-02T12:00:12Z'),
      latest: ['ios', '2.0', '17.1'],
      isFatal: true,
      handled: false,
      versions: ['1.0', '2.0'],
      platforms: ['android', 'ios'],
      level: 'fatal',
    });
    const page = await repo.pageFacts(P, ['g']);
    expect(page.usersAffected).toBe(4);
    expect(page.appVersionCounts).toEqual([
      { appVersion: '1.0', occurrences: 9 },
      { appVersion: '2.0', occurrences: 3 },
    ]);
    expect(page.latest).toMatchObject({ occurredAt: '2026-03-02T12:00:12.000Z', stackTrace: 's12' });
    const breakdown = await repo.breakdown(P, ['g']);
    expect(breakdown.platforms).toEqual([
      { value: 'android', occurrences: 6, devices: 5 },
      { value: 'ios', occurrences: 6, devices: 5 },
    ]);
    expect(await repo.environments(P, ['g'])).toEqual([
      { environment: 'production', occurrences: 8 },
      { environment: 'staging', occurrences: 4 },
    ]);

    // The same figures as the occurrences give them, whole and in one environment.
    const [f, p, b] = await anyTag(repo);
    expect(facts).toEqual(f.get('g'));
    expect(page).toEqual(p);
    expect(breakdown).toEqual(b);
    const only = { environment: 'staging' };
    const [fs2, ps2, bs2] = await anyTag(repo, only);
    expect((await repo.factsOf(P, [['g']], only)).get('g')).toEqual(fs2.get('g'));
    expect(await repo.pageFacts(P, ['g'], only)).toEqual(ps2);
    expect(await repo.breakdown(P, ['g'], only)).toEqual(bs2);
  });

  it("reads a merged group's keys as one group: an occurrence stored under both counts once", async () => {
    await ch.insert('crash_occurrences', [
      occurrence(20, 3, { group_key: 'h', id: 'h-20' }),
      occurrence(21, 3, { group_key: 'h', id: 'h-21' }),
      occurrence(5, 1, { group_key: 'h' }),
    ]);
    const merged = (await repo.factsOf(P, [['g', 'h']])).get('g');
    expect(merged?.occurrences).toBe(14);
    expect(merged?.lastSeen).toBe(Date.parse('2026-03-03T12:00:21Z'));
    const none = { tag: { key: 'none', value: '' } };
    expect(merged).toEqual((await repo.factsOf(P, [['g', 'h']], none)).get('g'));
    const breakdown = await repo.breakdown(P, ['g', 'h']);
    expect(breakdown.appVersions).toEqual([
      { value: '1.0', occurrences: 10, devices: 5 },
      { value: '2.0', occurrences: 4, devices: 4 },
    ]);
    expect(breakdown).toEqual(await repo.breakdown(P, ['g', 'h'], none));
  });
});
