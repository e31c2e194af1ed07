import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { crash, navigate, networkEvent, sessionStart, T0, tapEvent } from '../helpers/payloads.ts';
import { dashboardProject, signup } from '../helpers/accounts.ts';
import { release } from '../helpers/bundle.ts';

// The crash context over the real HTTP stack and stores: every field kept, hostile values of
// each dropped with a reason while the report itself is always accepted.
let s: TestServer;
let auth: { authorization: string };
let projectId: string;
beforeAll(async () => {
  // Chunks of 2 rows: every stream below is several chunks (and Parquet files) joined.
  s = await startTestServer({ RUN_WORKER: 'false', EXPORT_CHUNK_ROWS: '2' });
  ({ auth, projectId } = await s.createProject());
});
afterAll(async () => {
  await s?.close();
});

async function session(overrides: Record<string, unknown> = {}): Promise<string> {
  const st = sessionStart({ userId: 'session-user', ...overrides });
  expect((await inject('POST', '/ingest/session', auth, st)).statusCode).toBe(201);
  return st.sessionId;
}

const inject = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) =>
  s.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

const post = (payload: unknown) =>
  s.app.inject({
    method: 'POST',
    url: '/ingest/crash',
    headers: { ...auth, 'content-type': 'application/json' },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });

interface Row {
  environment: string;
  level: string;
  user_id: string | null;
  tags: Record<string, string>;
  context: string;
  breadcrumbs: string;
  dropped: string;
}
async function stored(sessionId: string): Promise<Row> {
  const rows = await (await s.stores()).ch.query<Row>(
    `SELECT environment, level, user_id, tags, context, breadcrumbs, dropped FROM crash_occurrences
     WHERE project_id = {p:String} AND session_id = {sid:UUID}`,
    { p: projectId, sid: sessionId },
  );
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

const FULL = {
  environment: 'staging',
  userId: 'user-7',
  tags: { screen: 'checkout', 'flag.new_cart': 'on' },
  context: { cart: { items: 2, coupon: null }, note: '<script>alert(1)</script>' },
  breadcrumbs: [
    { timestamp: T0 + 8000, category: 'navigation', message: 'to /cart', level: 'info' },
    { timestamp: T0 + 8500, category: 'http', message: 'POST /pay → 500', level: 'error', data: { status: 500 } },
  ],
  level: 'error',
};

/** A crash occurrence's exported columns, in the order the export gives them (written out, not imported). */
const EXPORTED_COLUMNS = [
  'id',
  'groupId',
  'sessionId',
  'occurredAt',
  'level',
  'environment',
  'userId',
  'message',
  'stackTrace',
  'symbolicatedStack',
  'isFatal',
  'handled',
  'platform',
  'osVersion',
  'appVersion',
  'brand',
  'model',
  'tags',
  'context',
  'breadcrumbs',
  'dropped',
];

describe('crash context at ingest', () => {
  it('keeps every field with the occurrence; the report user overrides the session user', async () => {
    const sid = await session();
    const r = await post(crash(sid, { ...FULL, isFatal: false, handled: true }));
    expect(r.statusCode, r.body).toBe(201);
    const row = await stored(sid);
    expect(row).toEqual({
      environment: 'staging',
      level: 'error',
      user_id: 'user-7',
      tags: FULL.tags,
      context: JSON.stringify(FULL.context),
      breadcrumbs: JSON.stringify(FULL.breadcrumbs),
      dropped: '',
    });
  });

  it('without the fields: the session user, the default level, empty context', async () => {
    const sid = await session();
    expect((await post(crash(sid))).statusCode).toBe(201);
    expect(await stored(sid)).toEqual({
      environment: '',
      level: 'fatal',
      user_id: 'session-user',
      tags: {},
      context: '',
      breadcrumbs: '',
      dropped: '',
    });
  });

  it('hostile values of every field: still 201, each dropped with a reason', async () => {
    const sid = await session();
    // Prototype keys are sent as raw JSON text: JSON.stringify of an object literal would drop them.
    const body = JSON.stringify(
      crash(sid, {
        environment: 'prod<script>',
        userId: 'u'.repeat(2000),
        level: 'warning',
        context: { s: 'x'.repeat(10_000) },
        breadcrumbs: [
          { timestamp: 'yesterday', category: 'c', message: 'm' },
          { timestamp: T0, category: 'ui', message: 'ok\u0007' },
        ],
      }),
    ).replace(/}$/, ', "tags": {"__proto__": {"x": "y"}, "constructor": "z", "good": "\\u202etxt"}}');
    const r = await post(body);
    expect(r.statusCode, r.body).toBe(201);
    const row = await stored(sid);
    expect(row.environment).toBe('');
    expect(row.user_id).toBe('session-user');
    expect(row.level).toBe('fatal');
    expect(row.tags).toEqual({ good: '\u202etxt' });
    expect(row.context).toBe('');
    expect(JSON.parse(row.breadcrumbs)).toEqual([
      { timestamp: T0, category: 'ui', message: 'ok\uFFFD', level: 'info' },
    ]);
    expect(JSON.parse(row.dropped).map((d: { field: string }) => d.field)).toEqual([
      'environment',
      'userId',
      'tags.__proto__',
      'tags.constructor',
      'context',
      'breadcrumbs[0]',
      'level',
    ]);
  });

  it('wrong types at the top level never fail the report', async () => {
    const sid = await session();
    const r = await post(
      crash(sid, {
        environment: 5,
        userId: {},
        tags: 'a',
        context: [1],
        breadcrumbs: { a: 1 },
        level: 7,
      }),
    );
    expect(r.statusCode, r.body).toBe(201);
    expect(JSON.parse((await stored(sid)).dropped)).toHaveLength(6);
  });

  it('deep nesting in context is dropped, not a 4xx or a stack overflow', async () => {
    const sid = await session();
    const deep = `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`;
    const r = await post(JSON.stringify(crash(sid)).replace(/}$/, `, "context": ${deep}}`));
    expect(r.statusCode, r.body).toBe(201);
    expect(JSON.parse((await stored(sid)).dropped)).toEqual([
      { field: 'context', reason: 'nests deeper than 5 levels' },
    ]);
  });

  it('what was kept and what was dropped reads back the same in every export format', async () => {
    const json = await s.app.inject({ method: 'GET', url: '/export/crash-occurrences?limit=1000', headers: auth });
    expect(json.statusCode).toBe(200);
    type Out = {
      sessionId: string;
      tags: Record<string, string>;
      dropped: { field: string }[];
      breadcrumbs: unknown[];
    };
    const rows = json.json().data as Out[];
    expect(rows.length).toBeGreaterThanOrEqual(5);
    const hostile = rows.find((r) => r.dropped.some((d) => d.field === 'tags.__proto__'))!;
    expect(hostile.tags).toEqual({ good: '\u202etxt' });
    expect(hostile.breadcrumbs).toHaveLength(1);
    const nd = await s.app.inject({ method: 'GET', url: '/export/crash-occurrences?stream=true', headers: auth });
    expect(
      nd.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(rows);
    const csv = parseCsv((await inject('GET', '/export/crash-occurrences?format=csv&limit=1000', auth)).body);
    expect(csv.map((r) => JSON.parse(r.dropped!))).toEqual(rows.map((r) => r.dropped));
    expect(csv.map((r) => JSON.parse(r.tags!))).toEqual(rows.map((r) => r.tags));
  });

  it('a number too large for a double (1e400) in the context is dropped, not a 422', async () => {
    const sid = await session();
    const extra =
      ', "context": {"n": 1e400, "ok": 1}, "tags": {"t": 1e400}, ' +
      '"breadcrumbs": [{"timestamp": 1e400, "category": "c"}]}';
    const body = JSON.stringify(crash(sid)).replace(/}$/, extra);
    const r = await post(body);
    expect(r.statusCode, r.body).toBe(201);
    const row = await stored(sid);
    expect(JSON.parse(row.context)).toEqual({ n: null, ok: 1 });
    expect(JSON.parse(row.dropped).map((d: { field: string }) => d.field)).toEqual(['tags.t', 'breadcrumbs[0]']);
    // outside the context a non-finite number is still refused
    const huge = JSON.stringify(crash(sid)).replace(/"timestamp":\d+/, '"timestamp":1e400');
    expect((await post(huge)).statusCode).toBe(422);
  });

  it('a message (info) does not mark its session crashed', async () => {
    const sid = await session();
    expect((await post(crash(sid, { isFatal: false, handled: true, level: 'info' }))).statusCode).toBe(201);
    const r = await (await s.stores()).pg.query<{ status: string; has_crash: boolean }>(
      'SELECT status, has_crash FROM sessions WHERE project_id = $1 AND id = $2',
      [projectId, sid],
    );
    expect(r.rows[0]).toEqual({ status: 'active', has_crash: false });
    expect((await stored(sid)).level).toBe('info');
  });
});

/** RFC 4180, enough for the export's CSV (quoted cells with doubled quotes, CRLF rows). */
function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  if (cell !== '' || row.length) {
    row.push(cell);
    rows.push(row);
  }
  const [head, ...body] = rows;
  return body.map((r) => Object.fromEntries(head!.map((h, i) => [h, r[i] ?? ''])));
}

const toArrayBuffer = (b: Buffer) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

describe('GET /export/crash-occurrences', () => {
  let p: Awaited<ReturnType<TestServer['createProject']>>;
  let groupA = '';
  const get = (q: string) => s.app.inject({ method: 'GET', url: `/export/crash-occurrences?${q}`, headers: p.auth });
  beforeAll(async () => {
    p = await s.createProject('occurrence export');
    const send = async (over: Record<string, unknown>) => {
      const st = sessionStart({ userId: 'su' });
      expect((await inject('POST', '/ingest/session', p.auth, st)).statusCode).toBe(201);
      const r = await inject('POST', '/ingest/crash', p.auth, crash(st.sessionId, over));
      expect(r.statusCode, r.body).toBe(201);
    };
    const A = 'at a (a.js:1:1)\nat b (b.js:2:2)';
    const B = 'at other (o.js:1:1)';
    await send({ ...FULL, stackTrace: A, timestamp: T0 + 1, isFatal: false, handled: true, environment: 'production' });
    await send({ stackTrace: A, timestamp: T0 + 2, environment: 'staging', tags: { k: '=HYPERLINK("x")' } });
    await send({ stackTrace: A, timestamp: T0 + 3, environment: 'production', level: 'fatal' });
    const message = { stackTrace: B, isFatal: false, handled: true };
    const day2 = T0 + 86_400_000 * 2;
    await send({ ...message, timestamp: day2, level: 'info', message: 'checkout shown', environment: 'production' });
    await send({ ...message, timestamp: day2 + 1, level: 'warning', message: 'slow', environment: 'bad env!' });
    const r = await (await s.stores()).pg.query<{ id: string; stack_head: string }>(
      'SELECT id, stack_head FROM crash_groups WHERE project_id = $1',
      [p.projectId],
    );
    groupA = r.rows.find((g) => g.stack_head.startsWith('at a'))!.id;
  });

  it('JSON: every field, in (occurredAt, id) order, paged', async () => {
    const r = await get('limit=2');
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    expect(body).toMatchObject({ total: 5, page: 1, limit: 2, pages: 3 });
    expect(body.data).toHaveLength(2);
    const first = body.data[0];
    expect(Object.keys(first)).toEqual(EXPORTED_COLUMNS);
    expect(first).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f]{64}$/),
      groupId: groupA,
      occurredAt: new Date(T0 + 1).toISOString(),
      level: 'error',
      environment: 'production',
      userId: 'user-7',
      isFatal: false,
      handled: true,
      platform: 'ios',
      tags: FULL.tags,
      context: FULL.context,
      breadcrumbs: FULL.breadcrumbs,
      dropped: [],
    });
    const last = (await get('page=3&limit=2')).json().data;
    expect(last).toHaveLength(1);
    expect(last[0]).toMatchObject({ level: 'warning', environment: '', context: null, breadcrumbs: [], userId: 'su' });
    expect(last[0].dropped).toEqual([{ field: 'environment', reason: 'must be made of letters, digits, _ . -' }]);
  });

  it('filters: groupId, environment, level (a list), from/to; an unknown group 404, a bad level 400', async () => {
    const ids = async (q: string) =>
      (await get(q)).json().data.map((o: { occurredAt: string }) => Date.parse(o.occurredAt) - T0);
    expect(await ids(`groupId=${groupA}`)).toEqual([1, 2, 3]);
    expect(await ids('environment=production')).toEqual([1, 3, 86_400_000 * 2]);
    expect(await ids(`environment=production&groupId=${groupA}`)).toEqual([1, 3]);
    expect(await ids('level=warning,info')).toEqual([86_400_000 * 2, 86_400_000 * 2 + 1]);
    expect(await ids('level=fatal')).toEqual([2, 3]);
    expect(await ids('from=2026-01-02')).toEqual([86_400_000 * 2, 86_400_000 * 2 + 1]);
    expect(await ids('to=2026-01-01')).toEqual([1, 2, 3]);
    expect((await get('groupId=00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await get('level=loud')).statusCode).toBe(400);
    expect((await get('groupId=nope')).statusCode).toBe(400);
  });

  it('CSV (paged and streamed): the same rows, objects as JSON text, formula cells neutralised', async () => {
    const json = (await get('limit=100')).json().data as Record<string, unknown>[];
    for (const q of ['format=csv&limit=100', 'format=csv&stream=true']) {
      const r = await get(q);
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(r.headers['content-disposition']).toBe('attachment; filename="crash-occurrences.csv"');
      const rows = parseCsv(r.body);
      expect(rows.map((x) => x.id)).toEqual(json.map((x) => x.id));
      expect(JSON.parse(rows[0]!.breadcrumbs!)).toEqual(FULL.breadcrumbs);
      expect(JSON.parse(rows[0]!.context!)).toEqual(FULL.context);
      expect(rows[0]!.isFatal).toBe('false');
      expect(rows[1]!.tags).toBe(JSON.stringify({ k: '=HYPERLINK("x")' }));
    }
    const empty = await get('format=csv&stream=true&environment=none');
    expect(empty.body.split('\r\n')[0]!.replaceAll('"', '')).toBe(EXPORTED_COLUMNS.join(','));
  });

  it('NDJSON (paged and streamed): one JSON row per line, equal to the JSON rows', async () => {
    const json = (await get('limit=100')).json().data;
    for (const q of ['format=ndjson&limit=100', 'format=ndjson&stream=true', 'stream=true']) {
      const r = await get(q);
      expect(r.statusCode).toBe(200);
      expect(
        r.body
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l)),
      ).toEqual(json);
    }
  });

  it('Parquet (paged and streamed over several chunks): typed columns, objects as JSON text', async () => {
    const json = (await get('limit=100')).json().data as Record<string, unknown>[];
    for (const q of ['format=parquet&limit=100', 'format=parquet&stream=true']) {
      const r = await get(q);
      expect(r.statusCode).toBe(200);
      const file = toArrayBuffer(r.rawPayload);
      const rows = (await parquetReadObjects({ file, compressors })) as Record<string, unknown>[];
      expect(rows).toHaveLength(json.length);
      rows.forEach((row, i) => {
        const j = json[i]!;
        expect(row.id).toBe(j.id);
        expect(row.occurredAt).toEqual(new Date(String(j.occurredAt)));
        expect(row.isFatal).toBe(j.isFatal);
        expect(row.level).toBe(j.level);
        expect(JSON.parse(String(row.tags))).toEqual(j.tags);
        expect(row.context === null ? null : JSON.parse(String(row.context))).toEqual(j.context);
        expect(JSON.parse(String(row.breadcrumbs))).toEqual(j.breadcrumbs);
        expect(JSON.parse(String(row.dropped))).toEqual(j.dropped);
      });
    }
    const empty = await get('format=parquet&stream=true&level=info&environment=staging');
    expect(await parquetReadObjects({ file: toArrayBuffer(empty.rawPayload), compressors })).toEqual([]);
  });
});

describe('the crash page API: one occurrence whole, its timeline and source lines', () => {
  it('context, breadcrumbs merged with the session events (crash last), source around mapped frames', async () => {
    const acct = await signup(s);
    const p = await dashboardProject(s, acct);
    const rel = release('https://shop.example.com/assets/index-8f3a2c.js', '8f3a2c');
    const MAP = '~/assets/index-8f3a2c.js.map';

    const up = await s.app.inject({
      method: 'POST',
      url: `/api/projects/${p.projectId}/releases/3.1.0/artifacts?name=${encodeURIComponent(MAP)}`,

      headers: { ...s.admin, 'content-type': 'application/octet-stream' },
      payload: rel.map,
    });
    expect(up.statusCode, up.body).toBe(201);
    const st = sessionStart({ userId: 'su' });
    st.device.appVersion = '3.1.0';
    expect((await inject('POST', '/ingest/session', p.auth, st)).statusCode).toBe(201);
    const sid = st.sessionId;
    const at = T0 + 9000;
    const events = [
      { ...navigate(sid, 1, '/cart'), timestamp: at - 5000 },
      { ...networkEvent(sid, 2, 500), timestamp: at - 2000 },
      { ...tapEvent(sid, 3), timestamp: at - 1000 },
      { ...navigate(sid, 4, '/after'), timestamp: at + 1000 },
    ];
    expect((await inject('POST', '/ingest/events', p.auth, { sessionId: sid, events })).statusCode).toBe(201);
    const hostile = '<script>alert(1)</script>';
    const message = 'Error: Order 1042 not found';
    const older = crash(sid, { stackTrace: rel.stack, message, timestamp: at - 100_000, environment: 'staging' });
    expect((await inject('POST', '/ingest/crash', p.auth, older)).statusCode).toBe(201);
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/crash',
      headers: p.auth,
      payload: crash(sid, {
        stackTrace: rel.stack,
        message,
        timestamp: at,
        environment: 'production',
        userId: hostile,
        tags: { screen: 'مرحبا‮', long: 'x'.repeat(200) },
        context: { html: hostile },
        breadcrumbs: [
          { timestamp: at - 3000, category: 'console', message: hostile, level: 'warning' },
          { timestamp: at - 1000, category: 'ui.click', message: 'Pay', level: 'info', data: { id: 'pay' } },
        ],
        level: 'warning',
      }),
    });
    expect(r.statusCode).toBe(201);
    const [g] = (
      await (
        await s.stores()
      ).pg.query<{ id: string }>('SELECT id FROM crash_groups WHERE project_id = $1', [p.projectId])
    ).rows;
    const get = async (q: string) => {
      const url = `/api/dashboard/projects/${p.projectId}/crash-groups/${g!.id}/occurrence${q}`;
      const x = await inject('GET', url, acct.headers);
      expect(x.statusCode, x.body).toBe(200);
      return x.json();
    };
    const latest = await get('');
    expect(latest).toMatchObject({ index: 0, total: 2 });
    expect(latest.occurrence).toMatchObject({
      environment: 'production',
      level: 'fatal',
      userId: hostile,
      tags: { screen: 'مرحبا‮', long: 'x'.repeat(200) },
      context: { html: hostile },
      dropped: [{ field: 'level', reason: '"warning" contradicts isFatal: true; fatal used' }],
    });
    type Entry = { source: string; kind: string; message: string };
    expect(latest.timeline.map((e: Entry) => [e.source, e.kind, e.message])).toEqual([
      ['event', 'navigate', '/screen/0 → /cart'],
      ['breadcrumb', 'console', hostile],
      ['event', 'network', expect.stringContaining('500')],
      ['breadcrumb', 'ui.click', 'Pay'],
      ['event', 'tap', expect.any(String)],
      ['crash', 'crash', 'Error: Order 1042 not found'],
    ]);
    expect(latest.timeline[2].level).toBe('error');
    // source lines from the map's sourcesContent: the throwing line marked, up to 5 around it
    expect(latest.source.length).toBeGreaterThan(0);
    const top = latest.source[0];
    expect(top).toMatchObject({ file: 'src/orders.ts', line: 6, inApp: true });
    expect(top.lines.find((l: { line: number }) => l.line === 6).text).toContain(
      "throw new Error('Order ' + id + ' not found')",
    );

    expect(top.lines.length).toBeLessThanOrEqual(11);
    expect(top.lines[0].line).toBe(1);

    const previous = await get('?index=1');
    expect(previous.occurrence).toMatchObject({ environment: 'staging', level: 'fatal' });
    expect(previous.timeline).toEqual([expect.objectContaining({ source: 'crash' })]);
    expect((await get('?environment=staging')).total).toBe(1);
    expect((await get('?index=5')).occurrence).toBeNull();
  });
});
