/**
 * `npx tsx bench/crashList.ts [--groups 100000] [--iterations 30]`: the dashboard's crash list
 * over a project of many crash groups (issue 31: "≤ 200 ms per page at 100k groups").
 *
 * The service is created in this process on a temporary DATA_DIR (embedded stores; the machine's
 * Postgres when DATABASE_URL is set). The groups are made directly in the stores: `--groups` rows
 * in Postgres with their counters (one INSERT … SELECT FROM generate_series, statuses, kinds,
 * counts, users and last-seen times spread), and one occurrence each in ClickHouse (INSERT …
 * SELECT FROM numbers()), so the page's figures are read as they are in use. Then it times the
 * list through the HTTP stack (`app.inject`): the first page, a deep page (offset 9,950), a
 * filter (status and kind), the other orders, and searches (a rare and a common substring),
 * printing p50 / p95 / p99 for each.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import { Latencies, numberArg as arg } from './stats.ts';
import { crashOccurrencesRepo } from '../src/repos/crashOccurrences.ts';
import { QueueBudget } from '../src/stores/clickhouse/batcher.ts';

const groups = Math.floor(arg('groups', 100_000));
const iterations = Math.floor(arg('iterations', 30));

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-bench-crash-list-'));
const server = await createServer(
  loadConfig({
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    DATA_DIR: dataDir,
    ADMIN_TOKEN: 'bench-admin-token-0123456789',
    LOG_LEVEL: 'silent',
    RUN_WORKER: 'false',
    RATE_LIMIT_DASHBOARD_PER_MIN: '1000000',
    RATE_LIMIT_AUTH_PER_MIN: '1000',
  }),
  { logger: false },
);
const { app } = server;

try {
  const email = `bench-${randomUUID()}@example.com`;
  const signup = await app.inject({
    method: 'POST',
    url: '/api/auth/signup',
    payload: { email, password: 'correct horse battery' },
  });
  const cookie = String(signup.headers['set-cookie']).split(';')[0] ?? '';
  const headers = { cookie, 'x-csrf-token': signup.json().csrfToken as string };
  const created = await app.inject({
    method: 'POST',
    url: '/api/dashboard/projects',
    headers,
    payload: { name: 'bench' },
  });
  const projectId = created.json().project.id as string;
  const now = Date.now();

  const t0 = performance.now();
  await server.svc.stores.pg.query(
    `INSERT INTO crash_groups (id, project_id, group_key, message, stack_head, status, is_fatal, handled,
       platform, app_version, os_version, first_seen_at, crash_occurrences, fatal_occurrences, crash_users,
       crash_last_seen_at, counted)
     SELECT gen_random_uuid(), $1, 'bench-' || i,
       (ARRAY['TypeError', 'RangeError', 'Error', 'NullPointerException'])[(1 + i % 4)::int] || ': failure ' || md5(i::text),
       'at fn_' || md5(i::text) || ' (src/module' || (i % 1000) || '.ts:' || (i % 97) || ':1)',
       (ARRAY['open', 'open', 'resolved', 'acknowledged', 'ignored'])[(1 + i % 5)::int], i % 3 = 0, i % 3 <> 0,
       'android', '1.' || (i % 50), '15', $2::bigint - i * 1000,
       1 + (i * 7919) % 5000, CASE WHEN i % 3 = 0 THEN 1 + (i * 7919) % 5000 ELSE 0 END, 1 + (i * 104729) % 900,
       $2::bigint - ((i * 104729) % 86400000), true
     FROM generate_series(1::bigint, $3::bigint) AS i`,
    [projectId, now, groups],
  );
  await server.svc.stores.pg.query('ANALYZE crash_groups');
  const t1 = performance.now();
  await server.svc.stores.ch.exec(
    `INSERT INTO crash_occurrences (project_id, group_key, id, occurred_at, session_id, user_id, device_fingerprint,
       platform, app_version, os_version, message, stack_trace, is_fatal, handled, level)
     SELECT '${projectId}', concat('bench-', toString(number + 1)), toString(number),
       fromUnixTimestamp64Milli(toInt64(${now} - (number * 104729) % 86400000)), generateUUIDv4(),
       concat('user-', toString(number % 900)), toString(number % 5000), 'android', '1.0', '15', 'm', 's',
       number % 3 = 0, number % 3 != 0, if(number % 3 = 0, 'fatal', 'error')
     FROM numbers(${groups})`,
  );
  const t2 = performance.now();
  console.log(
    `made ${groups.toLocaleString('en')} groups: Postgres ${Math.round(t1 - t0)} ms, ClickHouse ${Math.round(t2 - t1)} ms`,
  );

  const cases: [string, string][] = [
    ['first page (lastSeen)', ''],
    ['deep page (offset 9,950)', 'page=200'],
    ['filter status=open&kind=fatal', 'status=open&kind=fatal'],
    ['sort occurrences', 'sort=occurrences'],
    ['sort users', 'sort=users'],
    ['sort firstSeen, page 20', 'sort=firstSeen&page=20'],
    ['search, rare (a function)', 'q=fn_c4ca4238'],
    ['search, common (a file)', 'q=module12.ts'],
    ['search, error type + status', 'q=RangeError&status=open'],
  ];
  console.log(`crash list over ${groups.toLocaleString('en')} groups, ${iterations} iterations each, limit 50`);
  console.log(`${'case'.padEnd(34)} ${'p50'.padStart(8)} ${'p95'.padStart(8)} ${'p99'.padStart(8)}  total`);
  const results: Record<string, unknown> = {};
  for (const [label, query] of cases) {
    const lat = new Latencies();
    let total = 0;
    for (let i = 0; i < iterations + 2; i++) {
      const s = performance.now();
      const r = await app.inject({
        method: 'GET',
        url: `/api/dashboard/projects/${projectId}/crash-groups?limit=50${query ? `&${query}` : ''}`,
        headers,
      });
      if (r.statusCode !== 200) throw new Error(`${label}: ${r.statusCode} ${r.body}`);
      // the first two warm the caches and the plan
      if (i >= 2) lat.add(performance.now() - s);
      total = r.json().total as number;
    }
    const l = lat.summary();
    results[label] = { ...l, total };
    console.log(
      `${label.padEnd(34)} ${String(l.p50).padStart(8)} ${String(l.p95).padStart(8)} ${String(l.p99).padStart(8)}  ${total}`,
    );
  }
  // Where a first page's time goes: its two Postgres statements and its ClickHouse read, alone.
  const pg = server.svc.stores.pg;
  const where = `project_id = $1 AND merged_into IS NULL AND crash_occurrences > 0`;
  const keys = (
    await pg.query<{ group_key: string }>(
      `SELECT group_key FROM crash_groups WHERE ${where} ORDER BY crash_last_seen_at DESC, id DESC LIMIT 50`,
      [projectId],
    )
  ).rows.map((r) => [r.group_key]);
  // the list's own read of the page's figures (repos/crashOccurrences.ts factsOf)
  const facts = crashOccurrencesRepo(server.svc.stores.ch, new QueueBudget(1 << 20));
  const parts: [string, () => Promise<unknown>][] = [
    [
      'first page: page query',
      () =>
        pg.query(`SELECT * FROM crash_groups WHERE ${where} ORDER BY crash_last_seen_at DESC, id DESC LIMIT 50`, [
          projectId,
        ]),
    ],
    [
      'first page: count(*), unbounded',
      () => pg.query(`SELECT count(*) FROM crash_groups WHERE ${where}`, [projectId]),
    ],
    [
      'first page: count(*) to 2,001',
      () => pg.query(`SELECT count(*) FROM (SELECT 1 FROM crash_groups WHERE ${where} LIMIT 2001) t`, [projectId]),
    ],
    ['first page: ClickHouse facts of 50', () => facts.factsOf(projectId, keys, { levels: ['fatal', 'error'] })],
  ];
  for (const [label, run] of parts) {
    const lat = new Latencies();
    for (let i = 0; i < iterations + 2; i++) {
      const s = performance.now();
      await run();
      if (i >= 2) lat.add(performance.now() - s);
    }
    const l = lat.summary();
    results[label] = l;
    console.log(
      `${label.padEnd(34)} ${String(l.p50).padStart(8)} ${String(l.p95).padStart(8)} ${String(l.p99).padStart(8)}`,
    );
  }
  console.log(
    JSON.stringify({
      groups,
      iterations,
      node: process.version,
      cpus: os.cpus().length,
      loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
      results,
    }),
  );
} finally {
  await server.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
