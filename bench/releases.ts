/**
 * `npx tsx bench/releases.ts [--sessions 10000000] [--days 30] [--iterations 30]`: the Releases
 * page at scale (issue 22: "at 10 M sessions the page answers in ≤ 300 ms").
 *
 * The service is created in this process on a temporary DATA_DIR (embedded stores: the facts
 * are loaded straight into its ClickHouse engine, which belongs to one process), with a
 * dashboard account and a project. It loads `--sessions` session facts over `--days` days, 8 app
 * versions on 2 platforms, one user per 4 sessions, about 2% of sessions crashed (8% in the bad
 * version 1.6), with ClickHouse generating the rows (`INSERT … SELECT FROM numbers()`, 1 M rows
 * per insert, so the view aggregates them as ingestion's inserts would), plus one crash
 * occurrence per crashed session over 300 groups. Then it times the page's requests through the
 * HTTP stack (`app.inject`: routing, auth, schemas, the stores; no socket): the Releases page over
 * all the days, over the last 14 days, the compare view, and the export. The service keeps the
 * exact counts of days quiet for `--quiet-ms` (RELEASE_DAY_QUIET_MS, 2 s here), and the bench waits
 * that long after loading: each kind of request's first read, which counts the quiet days and keeps
 * them, is printed apart. Prints p50 / p95 / p99 per request, load time, and the figures of one
 * release as a sanity check.
 *
 * Do not run it with the full 10 M on a shared machine: `--sessions 200000` checks it works.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import { Latencies, numberArg as arg } from './stats.ts';
import { releaseHealthRepo } from '../src/repos/releaseHealth.ts';
import { crashOccurrencesRepo } from '../src/repos/crashOccurrences.ts';
import { QueueBudget } from '../src/stores/clickhouse/batcher.ts';

const sessions = Math.floor(arg('sessions', 10_000_000));
const days = Math.floor(arg('days', 30));
const iterations = Math.floor(arg('iterations', 30));
// How long a day must be over and untouched before its counts are kept (RELEASE_DAY_QUIET_MS): the
// bench waits this long after loading, as the page would be read once the past days went quiet.
const quietMs = Math.floor(arg('quiet-ms', 2000));
const CHUNK = 1_000_000;
const VERSIONS = 8;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-bench-releases-'));
const server = await createServer(
  loadConfig({
    DATA_DIR: dataDir,
    ADMIN_TOKEN: 'bench-admin-token-0123456789',
    LOG_LEVEL: 'silent',
    RUN_WORKER: 'false',
    RATE_LIMIT_DASHBOARD_PER_MIN: '100000',
    RATE_LIMIT_EXPORT_PER_MIN: '100000',
    RATE_LIMIT_AUTH_PER_MIN: '1000',
    RELEASE_DAY_QUIET_MS: String(quietMs),
  }),
  { logger: false },
);
const { app } = server;
const ch = server.svc.stores.ch;

try {
  const signup = await app.inject({
    method: 'POST',
    url: '/api/auth/signup',
    payload: { email: `bench-${randomUUID()}@example.com`, password: 'correct horse battery' },
  });
  const cookie = String(signup.headers['set-cookie']).split(';')[0]!;
  const headers = { cookie, 'x-csrf-token': signup.json().csrfToken as string };
  const created = await app.inject({
    method: 'POST',
    url: '/api/dashboard/projects',
    headers,
    payload: { name: 'bench' },
  });
  const projectId = created.json().project.id as string;
  const keyAuth = { authorization: `Bearer ${created.json().apiKey as string}` };

  const endMs = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  const spanMs = days * 86_400_000;
  const startMs = endMs - spanMs;
  // Row n: started at a spread-out instant of the span; newer versions take over as time goes on
  // (version = position in time + noise), so adoption moves like a real rollout; session n's id
  // is derived from n, so its start and crash facts and its occurrence name one session.
  // Constants only: nothing here comes from input but the numbers parsed above.
  const users = Math.max(1, Math.floor(sessions / 4));
  const row = `number,
    toDateTime64(${startMs / 1000}, 3, 'UTC') + toIntervalMillisecond(intHash64(number) % ${spanMs}) AS started_at,
    least(${VERSIONS - 1}, intDiv((intHash64(number) % ${spanMs}) * ${VERSIONS}, ${spanMs}) + (intHash64(number * 7) % 2)) AS vi,
    concat('1.', toString(vi)) AS app_version,
    if(number % 3 = 0, 'android', 'ios') AS platform,
    concat('user:', toString(intHash64(number * 13) % ${users})) AS user_key,
    intHash64(number * 31) % 1000 < if(vi = 6, 80, 20) AS crashed,
    toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(number)), 12, '0'))) AS session_id`;
  const t0 = performance.now();
  for (let from = 0; from < sessions; from += CHUNK) {
    const n = Math.min(CHUNK, sessions - from);
    const src = `(SELECT ${row} FROM numbers(${from}, ${n}))`;
    const facts = `INSERT INTO session_facts (project_id, session_id, started_at, app_version, platform, user_key, crashed)
      SELECT '${projectId}', session_id, started_at, app_version, platform, user_key`;
    await ch.exec(`${facts}, 0 FROM ${src}`);
    await ch.exec(`${facts}, 1 FROM ${src} WHERE crashed`);
    await ch.exec(`INSERT INTO crash_occurrences (project_id, group_key, id, occurred_at, session_id, user_id, device_fingerprint, platform,
        os_version, app_version, brand, model, message, stack_trace, is_fatal, handled)
      SELECT '${projectId}', concat('g', toString(intHash64(number * 17) % 300)), toString(number), started_at + toIntervalSecond(30), session_id,
        user_key, 'bench', platform, NULL, app_version, NULL, NULL, 'bench crash', 'at bench (bench.js:1:1)', true, false
      FROM ${src} WHERE crashed`);
    process.stdout.write(`\rloaded ${(from + n).toLocaleString('en')} / ${sessions.toLocaleString('en')} sessions`);
  }
  const loadS = (performance.now() - t0) / 1000;
  const [facts] = await ch.query<{ n: number; parts: number }>(
    `SELECT count() AS n, (SELECT count() FROM system.parts WHERE active AND table = 'release_health_daily') AS parts FROM session_facts`,
  );
  const [states] = await ch.query<{ d: number; h: number }>(
    `SELECT (SELECT count() FROM release_health_daily) AS d, (SELECT count() FROM release_adoption_hourly) AS h`,
  );
  console.log(
    `\nloaded in ${loadS.toFixed(1)} s: ${Number(facts!.n).toLocaleString('en')} facts, ${Number(states!.d).toLocaleString('en')} daily and ${Number(states!.h).toLocaleString('en')} hourly state rows (${facts!.parts} daily parts)`,
  );

  await new Promise((r) => setTimeout(r, quietMs + 500));

  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const base = `/api/dashboard/projects/${projectId}`;
  const requests: [string, string, Record<string, string>][] = [
    [`page, all ${days} days`, `${base}/releases?from=${day(startMs)}&to=${day(endMs)}`, headers],
    ['page, last 14 days (default)', `${base}/releases`, headers],
    ['page, one platform', `${base}/releases?from=${day(startMs)}&to=${day(endMs)}&platform=ios`, headers],
    [
      'compare 1.5 / 1.6 (ios)',
      `${base}/releases/compare?from=${day(startMs)}&to=${day(endMs)}&a=1.5&aPlatform=ios&b=1.6&bPlatform=ios`,
      headers,
    ],
    [`export JSON, all ${days} days`, `/export/releases?from=${day(startMs)}&to=${day(endMs)}`, keyAuth],
  ];
  console.log(
    `\n${iterations} requests each after a first one (the first counts the days that went quiet and keeps their counts), ms:`,
  );
  console.log(
    'request'.padEnd(34),
    'first'.padStart(8),
    'p50'.padStart(8),
    'p95'.padStart(8),
    'p99'.padStart(8),
    'max'.padStart(8),
  );
  for (const [name, url, h] of requests) {
    const t0 = performance.now();
    const warm = await app.inject({ method: 'GET', url, headers: h });
    const first = Math.round((performance.now() - t0) * 10) / 10;
    if (warm.statusCode !== 200) throw new Error(`${name}: ${warm.statusCode} ${warm.body}`);
    const l = new Latencies();
    for (let i = 0; i < iterations; i++) {
      const t = performance.now();
      const r = await app.inject({ method: 'GET', url, headers: h });
      l.add(performance.now() - t);
      if (r.statusCode !== 200) throw new Error(`${name}: ${r.statusCode}`);
    }
    const s = l.summary();
    console.log(
      name.padEnd(34),
      String(first).padStart(8),
      String(s.p50).padStart(8),
      String(s.p95).padStart(8),
      String(s.p99).padStart(8),
      String(s.max).padStart(8),
    );
  }
  // What the page's time is made of: each store read of the full-range page, alone.
  const health = releaseHealthRepo(ch, { quietMs });
  const occurrences = crashOccurrencesRepo(ch, new QueueBudget(1 << 20));
  const end = Math.min(endMs, Date.now());
  const parts: [string, () => Promise<unknown>][] = [
    [
      '  daily states: range + days (all)',
      () =>
        health.range(projectId, {
          fromMs: Math.floor(startMs / 86_400_000) * 86_400_000,
          toMs: Math.ceil(endMs / 86_400_000) * 86_400_000,
        }),
    ],
    // what the kept counts spare: exact sessions read from every session row (FINAL), and the users' sketches
    [
      '  exact sessions from rows, all',
      () =>
        ch.query(
          `SELECT app_version, platform, count(), countIf(crashed = 1) FROM release_sessions FINAL
      WHERE project_id = {p:String} GROUP BY app_version, platform SETTINGS do_not_merge_across_partitions_select_final = 1`,
          { p: projectId },
        ),
    ],
    [
      '  sketched sessions (before), all',
      () =>
        ch.query(
          `SELECT app_version, platform, uniqCombinedMerge(14)(sessions)
      FROM release_health_daily WHERE project_id = {p:String} GROUP BY app_version, platform`,
          { p: projectId },
        ),
    ],
    [
      "  users' sketches, all days",
      () =>
        ch.query(
          `SELECT toString(day) AS d, app_version AS v, platform AS p, uniqCombinedMerge(14)(users) AS u,
             uniqCombinedMerge(14)(crashed_users) AS cu, grouping(d) AS noDay, grouping(p) AS noPlatform
           FROM release_health_daily WHERE project_id = {p:String} GROUP BY GROUPING SETS ((d, v, p), (v, p), (d, v), (v))`,
          { p: projectId },
        ),
    ],
    ['  hourly states: adoption', () => health.adoption(projectId, end)],
    ['  states: first/last seen', () => health.seen(projectId)],
    ['  occurrences: new groups', () => occurrences.newGroupsByRelease(projectId)],
  ];
  for (const [name, f] of parts) {
    await f();
    const l = new Latencies();
    for (let i = 0; i < iterations; i++) {
      const t = performance.now();
      await f();
      l.add(performance.now() - t);
    }
    const s = l.summary();
    console.log(
      name.padEnd(34),
      String(s.p50).padStart(8),
      String(s.p95).padStart(8),
      String(s.p99).padStart(8),
      String(s.max).padStart(8),
    );
  }

  const page = (await app.inject({ method: 'GET', url: requests[0]![1], headers })).json();
  type Row = { appVersion: string; platform: string; platforms: Row[] };
  const ios = (v: string) =>
    page.data.find((r: Row) => r.appVersion === v)?.platforms.find((r: Row) => r.platform === 'ios');
  const [bad, good] = [ios('1.6'), ios('1.5')];
  // sessions and crashed sessions are exact (clickhouse/010): the count must be the sessions generated
  console.log(
    `\nreleases: ${page.total}; sessions counted ${page.data.reduce((n: number, r: { sessions: number }) => n + r.sessions, 0).toLocaleString('en')} of ${sessions.toLocaleString('en')}`,
  );
  console.log(`1.5 ios: ${JSON.stringify(good)}`);
  console.log(`1.6 ios (the bad one): ${JSON.stringify(bad)}`);
} finally {
  await server.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
