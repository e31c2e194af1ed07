/**
 * `npx tsx bench/crashInsights.ts [--sessions 10000000] [--occurrences 1000000] [--days 30] [--iterations 30]`:
 * a crash group's suspects and trail before the crash at scale (issue 30: "the group page with
 * suspects and trail answers in ≤ 500 ms for a group of 1M occurrences in a project of 10M sessions").
 *
 * The service is created in this process on a temporary DATA_DIR (embedded stores), with a
 * dashboard account, a project and one crash group made by a real crash report. ClickHouse then
 * generates the rest (`INSERT … SELECT FROM numbers()`, 1 M rows per insert, so the views
 * aggregate them as ingestion's inserts would):
 * - `--sessions` session facts over `--days` days: 8 releases, 2 platforms, 5 OS versions,
 *   40 device models, 4 network types;
 * - `--occurrences` occurrences of the group over the same days, with the OS version
 *   `android 15` planted (70 % of the group's occurrences, 20 % of the sessions), and a quarter as
 *   many occurrences of 100 other groups (the environment and tag baseline);
 * - 8 events (screens, taps, a custom event) in the minute before each of the group's
 *   occurrences, in its session, and a failing request 2 s before 60 % of them.
 * Then it times the crash page's requests through the HTTP stack (`app.inject`): the group, its
 * suspects, its trail (default window, and the widest), and prints p50 / p95 / p99 and the top
 * suspect and trail as a sanity check.
 *
 * Do not run it with the full sizes on a shared machine: `--sessions 100000 --occurrences 10000`
 * checks it works.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import { Latencies, numberArg as arg } from './stats.ts';

const sessions = Math.floor(arg('sessions', 10_000_000));
const occurrences = Math.floor(arg('occurrences', 1_000_000));
const days = Math.floor(arg('days', 30));
const iterations = Math.floor(arg('iterations', 30));
const CHUNK = 1_000_000;
const EVENTS_PER_OCCURRENCE = 8;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-bench-crash-insights-'));
const server = await createServer(
  loadConfig({
    DATA_DIR: dataDir,
    ADMIN_TOKEN: 'bench-admin-token-0123456789',
    LOG_LEVEL: 'silent',
    RUN_WORKER: 'false',
    INGEST_SPOOL: 'false',
    RATE_LIMIT_DASHBOARD_PER_MIN: '100000',
    RATE_LIMIT_AUTH_PER_MIN: '1000',
  }),
  { logger: false },
);
const { app } = server;
const ch = server.svc.stores.ch;

/** Runs `insert` over [0, total) in chunks of 1 M rows, printing progress. */
async function chunked(label: string, total: number, insert: (from: number, n: number) => Promise<void>) {
  for (let from = 0; from < total; from += CHUNK) {
    const n = Math.min(CHUNK, total - from);
    await insert(from, n);
    process.stdout.write(`\r${label}: ${(from + n).toLocaleString('en')} / ${total.toLocaleString('en')}   `);
  }
  process.stdout.write('\n');
}

const cell = (x: unknown) => String(x).padStart(8);

try {
  const email = `bench-${randomUUID()}@example.com`;
  const signup = await app.inject({
    method: 'POST',
    url: '/api/auth/signup',
    payload: { email, password: 'correct horse battery' },
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

  // The group, made the way a real one is: a session and a crash report through the API.
  const seed = randomUUID();
  const endMs = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  const spanMs = days * 86_400_000;
  const startMs = endMs - spanMs;
  const post = async (url: string, payload: object) => {
    const r = await app.inject({ method: 'POST', url, headers: keyAuth, payload });
    if (r.statusCode !== 201) throw new Error(`${url}: ${r.statusCode} ${r.body}`);
  };
  await post('/ingest/session', {
    sessionId: seed,
    startedAt: startMs,
    device: { platform: 'android', osVersion: '15', appVersion: '1.7' },
  });
  await post('/ingest/crash', {
    sessionId: seed,
    timestamp: startMs + 1000,
    message: 'Error: bench',
    stackTrace: 'Error: bench\n    at pay (app.js:1:1)',
    isFatal: true,
    handled: false,
  });
  await server.svc.ingest.drain();
  const group = (
    await server.svc.stores.pg.query<{ id: string; group_key: string }>(
      'SELECT id, group_key FROM crash_groups WHERE project_id = $1',
      [projectId],
    )
  ).rows[0]!;

  // Constants only: nothing here comes from input but the numbers parsed above.
  const sessionId = (n: string) => `toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(${n})), 12, '0')))`;
  const users = Math.max(1, Math.floor(sessions / 4));
  const t0 = performance.now();
  await chunked('session facts', sessions, (from, n) =>
    ch.exec(`INSERT INTO session_facts
      (project_id, session_id, started_at, app_version, platform, user_key, crashed,
       os_version, brand, model, network_type)
    SELECT '${projectId}', ${sessionId('number')},
      toDateTime64(${startMs / 1000}, 3, 'UTC') + toIntervalMillisecond(intHash64(number) % ${spanMs}),
      concat('1.', toString(intHash64(number * 3) % 8)), if(number % 2 = 0, 'android', 'ios'),
      concat('user:', toString(number % ${users})), 0,
      if(number % 2 = 0, ['13', '14', '15', '15', '16'][intHash64(number * 5) % 5 + 1], '18'),
      if(number % 2 = 0, 'Google', 'Apple'), concat('Model ', toString(intHash64(number * 7) % 40)),
      ['wifi', 'cellular', 'none', 'unknown'][intHash64(number * 11) % 4 + 1]
    FROM numbers(${from}, ${n})`),
  );

  // Occurrence k's time; its events and failing request use the same expression.
  const occurredAt = (k: string) =>
    `toDateTime64(${startMs / 1000}, 3, 'UTC') + toIntervalMillisecond(intHash64(${k} * 13) % ${spanMs})`;
  const sessionOf = (k: string) => sessionId(`intHash64(${k} * 17) % ${sessions}`);
  // Occurrence k: a session of the project, a time in the span; 70 % on android 15 (the plant).
  const occurrenceRows = (groupKey: string, offset: number, from: number, n: number, tag: string) => `
    INSERT INTO crash_occurrences
      (project_id, group_key, id, occurred_at, session_id, user_id, device_fingerprint, platform, os_version,
       app_version, brand, model, message, stack_trace, is_fatal, handled, network_type, environment, tags)
    SELECT '${projectId}', ${groupKey}, toString(number + ${offset}), ${occurredAt('number')},
      ${sessionOf('number')}, NULL, 'bench', 'android',
      if(number % 10 < 7, '15', ['13', '14', '16'][number % 3 + 1]), concat('1.', toString(number % 8)),
      'Google', concat('Model ', toString(number % 40)), 'Error: bench', 'at pay (app.js:1:1)', true, false,
      ['wifi', 'cellular', 'none', 'unknown'][number % 4 + 1], 'production', map('checkout', ${tag})
    FROM numbers(${from}, ${n})`;
  await chunked('group occurrences', occurrences, (from, n) =>
    ch.exec(occurrenceRows(`'${group.group_key}'`, 0, from, n, `if(number % 4 = 0, 'v2', 'v1')`)),
  );
  await chunked("other groups' occurrences", Math.ceil(occurrences / 4), (from, n) =>
    ch.exec(occurrenceRows(`concat('other-', toString(number % 100))`, occurrences, from, n, `'v1'`)),
  );

  // The minute before each of the group's occurrences, in its session.
  const E = EVENTS_PER_OCCURRENCE;
  await chunked('events', occurrences * E, (from, n) =>
    ch.exec(`INSERT INTO events
      (project_id, session_id, sequence_number, type, timestamp, nav_from, nav_to, method, url, status_code, duration,
       error, name, properties, x, y, target)
    SELECT '${projectId}', ${sessionOf('k')}, number,
      ['navigate', 'tap', 'navigate', 'tap', 'custom', 'navigate', 'tap', 'tap'][j + 1],
      ${occurredAt('k')} - toIntervalSecond((${E} - j) * 7),
      NULL, concat('/screen/', toString((k + j) % 5)), '', '', NULL, NULL, NULL, 'add_to_cart', '', 1, 1,
      ['buy', 'pay', 'back'][(k * j) % 3 + 1]
    FROM (SELECT number, intDiv(number, ${E}) AS k, number % ${E} AS j FROM numbers(${from}, ${n}))`),
  );
  await chunked('failing requests', occurrences, (from, n) =>
    ch.exec(`INSERT INTO network_logs
      (project_id, timestamp, id, session_id, method, url, status_code, duration, request_size, response_size, error)
    SELECT '${projectId}', ${occurredAt('number')} - toIntervalSecond(2), toString(generateUUIDv4(number)),
      ${sessionOf('number')}, 'POST', concat('https://api.shop.example/orders/', toString(number)),
      503, 40, NULL, NULL, NULL
    FROM numbers(${from}, ${n}) WHERE number % 10 < 6`),
  );
  const loadS = (performance.now() - t0) / 1000;
  const [counts] = await ch.query<{ s: number; c: number; p: number }>(
    `SELECT (SELECT count() FROM session_dimensions_daily) AS s, (SELECT count() FROM crash_dimensions_daily) AS c,
       (SELECT count() FROM crash_dimensions_project_daily) AS p`,
  );
  console.log(
    `loaded in ${loadS.toFixed(1)} s; state rows: ${Number(counts!.s).toLocaleString('en')} session, ` +
      `${Number(counts!.c).toLocaleString('en')} group, ${Number(counts!.p).toLocaleString('en')} project`,
  );

  const base = `/api/dashboard/projects/${projectId}/crash-groups/${group.id}`;
  const requests: [string, string][] = [
    ['group page', base],
    ['suspects (30 days)', `${base}/suspects`],
    ['trail (30 s, 5 steps)', `${base}/trail`],
    ['trail (300 s, 10 steps)', `${base}/trail?window=300&steps=10`],
  ];
  console.log(`\n${iterations} requests each (after one warm-up), ms:`);
  console.log('request'.padEnd(28), cell('p50'), cell('p95'), cell('p99'), cell('max'));
  for (const [name, url] of requests) {
    const warm = await app.inject({ method: 'GET', url, headers });
    if (warm.statusCode !== 200) throw new Error(`${name}: ${warm.statusCode} ${warm.body}`);
    const l = new Latencies();
    for (let i = 0; i < iterations; i++) {
      const t = performance.now();
      const r = await app.inject({ method: 'GET', url, headers });
      l.add(performance.now() - t);
      if (r.statusCode !== 200) throw new Error(`${name}: ${r.statusCode}`);
    }
    const s = l.summary();
    console.log(name.padEnd(28), cell(s.p50), cell(s.p95), cell(s.p99), cell(s.max));
  }

  const sus = (await app.inject({ method: 'GET', url: `${base}/suspects`, headers })).json();
  const trail = (await app.inject({ method: 'GET', url: `${base}/trail`, headers })).json();
  const p = (x: number) => `${(x * 100).toFixed(1)}%`;
  console.log(
    `\nsuspects: ${sus.occurrences.toLocaleString('en')} occurrences over ` +
      `${sus.period.daysWithOccurrences} days; top 3:`,
  );
  for (const x of sus.suspects.slice(0, 3)) {
    console.log(
      `  ${x.dimension} = ${x.value}: ${p(x.groupShare)} vs ${p(x.baselineShare)} ${x.baselineUnit}, ` +
        `lift ${x.lift?.toFixed(2)} ≥ ${x.liftLow.toFixed(2)}`,
    );
  }
  const top = trail.trails[0];
  console.log(
    `trail: ${trail.sampled} occurrences sampled, ${trail.withoutEvents} without events; ` +
      `top: ${top?.occurrences} × ` +
      (top?.steps ?? []).map((x: { label: string }) => x.label).join(' › '),
  );
} finally {
  await server.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
