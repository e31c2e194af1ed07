import { gunzipSync } from 'node:zlib';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  T0,
  crash,
  customEvent,
  navigate,
  networkEvent,
  networkRequest,
  sessionStart,
  tapEvent,
} from '../helpers/payloads.ts';

// Small stream chunks, so every stream in this file spans several keyset chunks.
const CHUNK = 3;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
/** updatedAt is the server's clock at the row's last change: any ISO 8601 UTC time with ms. */
const isoTime = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

let s: TestServer;
type Project = Awaited<ReturnType<TestServer['createProject']>>;
let A: Project;
let B: Project;

async function post(p: Project, url: string, payload: object, expected = [200, 201]) {
  const r = await s.app.inject({ method: 'POST', url, headers: p.auth, payload });
  if (!expected.includes(r.statusCode)) throw new Error(`${url}: ${r.statusCode} ${r.body}`);
  return r;
}
const get = (p: Project | undefined, url: string, headers: Record<string, string> = {}) =>
  s.app.inject({ method: 'GET', url, headers: { ...(p ? p.auth : {}), ...headers } });
const getJson = async (p: Project, url: string) => {
  const r = await get(p, url);
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
};

/** The JSON value a CSV cell carries for a text value (the formula neutralisation of docs/decisions.md). */
const neutral = (v: unknown) =>
  typeof v === 'string' && /^[ \uFEFF\u00A0\u3000]*[=+\-@\t\r\n\uFF1D\uFF0B\uFF0D\uFF20]/.test(v) ? `'${v}` : v;

/** Loads CSV back with ClickHouse's CSVWithNames input: an independent RFC 4180 reader. */
async function readCsv(csv: string, structure: string): Promise<Record<string, unknown>[]> {
  return (await s.stores()).ch.query(`SELECT * FROM format(CSVWithNames, {structure:String}, {csv:String})`, {
    structure,
    csv,
  });
}

// Session ids of project A, by role.
const sid: Record<string, string> = {};
const tricky = {
  url: '=HYPERLINK("http://evil.example","click"), and "quotes"',
  error: '-1 connection reset\r\nretrying, "twice"',
  method: '@GET',
};

beforeAll(async () => {
  s = await startTestServer({
    EXPORT_CHUNK_ROWS: String(CHUNK),
    RATE_LIMIT_EXPORT_PER_MIN: '100000',
    RATE_LIMIT_INGEST_PER_MIN: '100000',
  });
  A = await s.createProject('A');
  B = await s.createProject('B');

  // s1: completed, 4 distinct events (sent out of order, one batch retried), a network error.
  const s1 = sessionStart({ startedAt: T0 });
  sid.s1 = s1.sessionId;
  await post(A, '/ingest/session', s1);
  await post(A, '/ingest/events', {
    sessionId: s1.sessionId,
    events: [tapEvent(s1.sessionId, 3), customEvent(s1.sessionId, 2)],
  });
  const early = { sessionId: s1.sessionId, events: [navigate(s1.sessionId, 0), networkEvent(s1.sessionId, 1, 503)] };
  await post(A, '/ingest/events', early);
  await post(A, '/ingest/events', early);
  await post(A, '/ingest/network', {
    sessionId: s1.sessionId,
    requests: [
      networkRequest({
        timestamp: T0 + 20_000,
        url: tricky.url,
        error: tricky.error,
        method: tricky.method,
        statusCode: undefined,
      }),
      networkRequest({ timestamp: T0 + 20_000 }),
      networkRequest({ timestamp: T0 + 20_000 }),
      networkRequest({ timestamp: T0 + DAY + 1 }),
    ],
  });
  await post(
    A,
    '/ingest/crash',
    crash(s1.sessionId, {
      isFatal: false,
      handled: true,
      timestamp: T0 + 30_000,
      message: '=cmd|"/c calc"!A1\nsecond line',
      stackTrace: 'at other (a.js:1:1)\nat b (b.js:2:2)',
    }),
  );
  await post(A, '/ingest/session/end', { sessionId: s1.sessionId, endedAt: T0 + 60_000 });

  // s2: crashed by a fatal crash, never ended. s3/s4: active, straddling a UTC midnight.
  const s2 = sessionStart({
    startedAt: T0 + DAY + 5 * 3_600_000,
    userId: undefined,
    device: { platform: 'android', osVersion: '14', appVersion: '2.0.0', networkType: 'cellular' },
  });
  sid.s2 = s2.sessionId;
  await post(A, '/ingest/session', s2);
  await post(A, '/ingest/crash', crash(s2.sessionId, { timestamp: T0 + DAY + 6 * 3_600_000 }));
  const s3 = sessionStart({ startedAt: T0 + 2 * DAY - 1 });
  const s4 = sessionStart({ startedAt: T0 + 2 * DAY });
  sid.s3 = s3.sessionId;
  sid.s4 = s4.sessionId;
  await post(A, '/ingest/session', s3);
  await post(A, '/ingest/session', s4);
  // Two sessions starting at the same instant: ordered by id.
  for (const k of ['t1', 't2']) {
    const t = sessionStart({ startedAt: T0 + 3 * DAY });
    sid[k] = t.sessionId;
    await post(A, '/ingest/session', t);
  }

  // Project B has rows of every kind; none may show in A's exports.
  const b1 = sessionStart({ startedAt: T0 + 1000 });
  sid.b1 = b1.sessionId;
  await post(B, '/ingest/session', b1);
  await post(B, '/ingest/events', {
    sessionId: b1.sessionId,
    events: [navigate(b1.sessionId, 0), networkEvent(b1.sessionId, 1)],
  });
  await post(B, '/ingest/network', { sessionId: b1.sessionId, requests: [networkRequest()] });
  await post(B, '/ingest/crash', crash(b1.sessionId));
});

afterAll(async () => {
  await s?.close();
});

describe('GET /export/sessions', () => {
  it('returns the contract fields in (startedAt, id) order, with the envelope', async () => {
    const body = await getJson(A, '/export/sessions');
    expect(Object.keys(body)).toEqual(['data', 'total', 'page', 'limit', 'pages']);
    expect(body).toMatchObject({ total: 6, page: 1, limit: 100, pages: 1 });
    const ties = [sid.t1!, sid.t2!].sort();
    expect(body.data.map((r: { id: string }) => r.id)).toEqual([sid.s1, sid.s2, sid.s3, sid.s4, ...ties]);
    expect(body.data[0]).toEqual({
      id: sid.s1,
      userId: 'user-1',
      status: 'completed',
      platform: 'ios',
      osVersion: '17.2',
      appVersion: '1.4.0',
      networkType: 'wifi',
      eventCount: 4,
      hasCrash: true,
      hasNetworkErrors: true,
      duration: 60_000,
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T00:01:00.000Z',
      updatedAt: isoTime,
    });
    expect(body.data[1]).toEqual({
      id: sid.s2,
      userId: null,
      status: 'crashed',
      platform: 'android',
      osVersion: '14',
      appVersion: '2.0.0',
      // a fatal crash's provisional end (DESIGN "Session end"): the crash's time
      networkType: 'cellular',
      eventCount: 0,
      hasCrash: true,
      hasNetworkErrors: false,
      duration: 3_600_000,
      startedAt: '2026-01-02T05:00:00.000Z',
      endedAt: '2026-01-02T06:00:00.000Z',
      updatedAt: isoTime,
    });
    expect(body.data[2]).toMatchObject({
      status: 'active',
      duration: null,
      endedAt: null,
      startedAt: '2026-01-02T23:59:59.999Z',
    });
  });

  it('filters on startedAt: from inclusive, a date-only to covers its whole UTC day', async () => {
    const ids = async (q: string) => (await getJson(A, `/export/sessions?${q}`)).data.map((r: { id: string }) => r.id);
    expect(await ids('from=2026-01-02&to=2026-01-02')).toEqual([sid.s2, sid.s3]);
    expect(await ids('from=2026-01-03')).toEqual([sid.s4, ...[sid.t1!, sid.t2!].sort()]);
    expect(await ids('to=2026-01-01')).toEqual([sid.s1]);
    // date-times: from inclusive to the millisecond, to inclusive to the millisecond
    expect(
      await ids(
        `from=${encodeURIComponent('2026-01-02T23:59:59.999Z')}&to=${encodeURIComponent('2026-01-03T00:00:00.000Z')}`,
      ),
    ).toEqual([sid.s3, sid.s4]);
    expect(await ids(`to=${encodeURIComponent('2026-01-02T23:59:59.998Z')}`)).toEqual([sid.s1, sid.s2]);
    // an offset: 2026-01-03T01:00+01:00 is midnight UTC
    expect(
      await ids(
        `from=${encodeURIComponent('2026-01-03T01:00:00+01:00')}&to=${encodeURIComponent('2026-01-03T01:00:00+01:00')}`,
      ),
    ).toEqual([sid.s4]);
    expect((await getJson(A, '/export/sessions?from=2026-01-02&to=2026-01-02')).total).toBe(2);
  });

  it('rejects dates that are not ISO 8601 with 400', async () => {
    for (const q of [
      'from=yesterday',
      'to=2026-13-01',
      'from=2026-02-30',
      'from=1767225600000',
      'to=2026-01-01T25:00:00Z',
      'from=2026-01-02&to=2026-01-01',
    ]) {
      const r = await get(A, `/export/sessions?${q}`);
      expect(r.statusCode, q).toBe(400);
      expect(typeof r.json().error).toBe('string');
    }
  });
});

describe('pagination', () => {
  it('walks pages in order, clamps limit to 1000, answers past-the-end pages with [] and the true total', async () => {
    const all = (await getJson(A, '/export/sessions')).data.map((r: { id: string }) => r.id);
    const p1 = await getJson(A, '/export/sessions?limit=4');
    const p2 = await getJson(A, '/export/sessions?limit=4&page=2');
    expect(p1).toMatchObject({ total: 6, page: 1, limit: 4, pages: 2 });
    expect(p2).toMatchObject({ total: 6, page: 2, limit: 4, pages: 2 });
    expect([...p1.data, ...p2.data].map((r: { id: string }) => r.id)).toEqual(all);
    expect(await getJson(A, '/export/sessions?limit=4&page=3')).toEqual({
      data: [],
      total: 6,
      page: 3,
      limit: 4,
      pages: 2,
    });
    expect(await getJson(A, '/export/sessions?page=9007199254740991')).toMatchObject({ data: [], total: 6 });
    expect(await getJson(A, '/export/sessions?limit=5000')).toMatchObject({ limit: 1000, pages: 1, total: 6 });
    const big = await get(A, '/export/network?limit=99999&format=csv');
    expect(big.headers['x-limit']).toBe('1000');
  });

  it('rejects page and limit that are not positive integers with 400', async () => {
    for (const q of [
      'page=0',
      'page=-1',
      'page=abc',
      'page=1.5',
      'limit=0',
      'limit=-5',
      'limit=ten',
      'limit=2.5',
      'page=1&page=2',
    ]) {
      for (const path of [
        '/export/sessions',
        '/export/crashes',
        `/export/events?sessionId=${sid.s1}&x=1`,
        '/export/network',
      ]) {
        const r = await get(A, `${path}${path.includes('?') ? '&' : '?'}${q}`);
        expect(r.statusCode, `${path} ${q}`).toBe(400);
        expect(r.json(), `${path} ${q}`).toEqual({
          error: expect.any(String),
          code: 'invalid_parameter',
          field: q.slice(0, q.indexOf('=')),
          keyword: expect.any(String),
          params: expect.any(Object),
        });
      }
    }
  });

  it('rejects an unknown format with 400, and stream=true with format=json', async () => {
    expect((await get(A, '/export/sessions?format=xml')).statusCode).toBe(400);
    expect((await get(A, '/export/network?format=CSV')).statusCode).toBe(400);
    expect((await get(A, '/export/crashes?format=json&stream=true')).statusCode).toBe(400);
    expect((await get(A, '/export/crashes?stream=maybe')).statusCode).toBe(400);
  });

  it('needs a valid API key', async () => {
    expect((await get(undefined, '/export/sessions')).statusCode).toBe(401);
    expect((await get(undefined, '/export/network', { authorization: 'Bearer frk_nope' })).statusCode).toBe(401);
  });
});

describe('GET /export/crashes', () => {
  it('returns the project crash groups by (firstSeenAt, id)', async () => {
    const body = await getJson(A, '/export/crashes');
    expect(body).toMatchObject({ total: 2, page: 1, limit: 100, pages: 1 });
    expect(body.data[0]).toEqual({
      id: expect.any(String),
      message: '=cmd|"/c calc"!A1\nsecond line',
      status: 'open',
      isFatal: false,
      handled: true,
      occurrenceCount: 1,
      affectedDevices: 1,
      platform: 'ios',
      appVersion: '1.4.0',
      osVersion: '17.2',
      firstSeenAt: iso(T0 + 30_000),
      lastSeenAt: iso(T0 + 30_000),
      updatedAt: isoTime,
      mergedInto: null,
    });
    expect(body.data[1]).toMatchObject({
      message: 'TypeError: undefined is not a function',
      isFatal: true,
      handled: false,
      platform: 'android',
      appVersion: '2.0.0',
      osVersion: '14',
      firstSeenAt: iso(T0 + DAY + 6 * 3_600_000),
    });
    const b = await getJson(B, '/export/crashes');
    expect(b.total).toBe(1);
    expect(body.data.map((r: { id: string }) => r.id)).not.toContain(b.data[0].id);
  });
});

describe('GET /export/events', () => {
  it('returns the session events in sequence order with per-type data', async () => {
    const body = await getJson(A, `/export/events?sessionId=${sid.s1}`);
    expect(body).toMatchObject({ total: 4, page: 1, limit: 100, pages: 1 });
    const e = (seq: number, type: string, data: object) => ({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type,
      timestamp: iso(T0 + 1000 + seq),
      sequenceNumber: seq,
      data,
    });
    expect(body.data).toEqual([
      e(0, 'navigate', { from: null, to: '/screen/0' }),
      e(1, 'network', {
        method: 'GET',
        url: 'https://api.example.com/items/1',
        statusCode: 503,
        duration: 120,
        error: null,
      }),
      e(2, 'custom', { name: 'purchase', properties: { sku: 'A1', amount: 3 } }),
      e(3, 'tap', { x: 10.5, y: 200, target: 'buy-button' }),
    ]);
    const p2 = await getJson(A, `/export/events?sessionId=${sid.s1}&limit=3&page=2`);
    expect(p2).toMatchObject({ total: 4, page: 2, limit: 3, pages: 2 });
    expect(p2.data.map((r: { sequenceNumber: number }) => r.sequenceNumber)).toEqual([3]);
  });

  it('answers 400 without sessionId, 404 for an unknown session or one of another project', async () => {
    const missing = await get(A, '/export/events');
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toMatch(/sessionId/);
    expect((await get(A, '/export/events?sessionId=not-a-uuid')).statusCode).toBe(400);
    expect((await get(A, `/export/events?sessionId=${randomUUID()}`)).statusCode).toBe(404);
    const foreign = await get(A, `/export/events?sessionId=${sid.b1}`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: 'Session not found', code: 'not_found' });
    expect((await get(A, `/export/events?sessionId=${sid.b1}&stream=true`)).statusCode).toBe(404);
    expect((await getJson(B, `/export/events?sessionId=${sid.b1}`)).total).toBe(2);
  });
});

describe('GET /export/network', () => {
  it('returns network logs by (timestamp, id), mirrored network events included, nothing of other projects', async () => {
    const body = await getJson(A, '/export/network');
    expect(body).toMatchObject({ total: 5, page: 1, limit: 100, pages: 1 });
    const rows = body.data as { id: string; timestamp: string; sessionId: string }[];
    expect(rows[0]).toEqual({
      id: expect.any(String),
      sessionId: sid.s1,
      method: 'GET',
      url: 'https://api.example.com/items/1',
      statusCode: 503,
      duration: 120,
      error: null,
      timestamp: iso(T0 + 1001),
    });
    const sameInstant = rows.filter((r) => r.timestamp === iso(T0 + 20_000));
    expect(sameInstant.map((r) => r.id)).toEqual(sameInstant.map((r) => r.id).sort());
    expect(sameInstant).toHaveLength(3);
    expect(rows.find((r) => (r as { url?: string }).url === tricky.url)).toMatchObject({
      statusCode: null,
      error: tricky.error,
      method: tricky.method,
    });
    expect(rows.every((r) => r.sessionId === sid.s1)).toBe(true);
    expect((await getJson(B, '/export/network')).total).toBe(2);
  });

  it('filters on timestamp', async () => {
    expect((await getJson(A, '/export/network?to=2026-01-01')).total).toBe(4);
    expect((await getJson(A, '/export/network?from=2026-01-02')).total).toBe(1);
    expect(
      (
        await getJson(
          A,
          `/export/network?from=${encodeURIComponent(iso(T0 + 20_000))}&to=${encodeURIComponent(iso(T0 + 20_000))}`,
        )
      ).total,
    ).toBe(3);
    expect((await get(A, '/export/network?to=31/01/2026')).statusCode).toBe(400);
  });
});

describe('CSV', () => {
  it('is a file download with the pagination headers', async () => {
    const r = await get(A, '/export/sessions?format=csv&limit=4&page=2');
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(r.headers['content-disposition']).toBe('attachment; filename="sessions.csv"');
    expect([r.headers['x-total-count'], r.headers['x-page'], r.headers['x-limit'], r.headers['x-pages']]).toEqual([
      '6',
      '2',
      '4',
      '2',
    ]);
    const lines = r.body.split('\r\n');
    expect(lines[0]).toBe(
      '"id","userId","status","platform","osVersion","appVersion","networkType","eventCount","hasCrash","hasNetworkErrors","duration","startedAt","endedAt","updatedAt"',
    );
    expect(lines).toHaveLength(4); // header, 2 rows, and the empty string after the last CRLF
    const past = await get(A, '/export/network?format=csv&page=50');
    expect(past.body).toBe('"id","sessionId","method","url","statusCode","duration","error","timestamp"\r\n');
    expect(past.headers['x-total-count']).toBe('5');
  });

  const structures = {
    sessions:
      'id String, userId Nullable(String), status String, platform Nullable(String), osVersion Nullable(String), appVersion Nullable(String), networkType Nullable(String), eventCount UInt64, hasCrash Bool, hasNetworkErrors Bool, duration Nullable(Int64), startedAt String, endedAt Nullable(String), updatedAt String',
    crashes:
      'id String, message String, status String, isFatal Bool, handled Bool, occurrenceCount UInt64, affectedDevices UInt64, platform Nullable(String), appVersion Nullable(String), osVersion Nullable(String), firstSeenAt String, lastSeenAt String, updatedAt String, mergedInto Nullable(String)',
    events: 'id String, type String, timestamp String, sequenceNumber UInt64, data String',
    network:
      'id String, sessionId String, method String, url String, statusCode Nullable(Int32), duration Int64, error Nullable(String), timestamp String',
  } as const;
  const urls = {
    sessions: '/export/sessions',
    crashes: '/export/crashes',
    network: '/export/network',
    events: () => `/export/events?sessionId=${sid.s1}`,
  };
  const url = (k: keyof typeof urls) => {
    const u = urls[k];
    return typeof u === 'function' ? u() : u;
  };
  const withParam = (u: string, q: string) => `${u}${u.includes('?') ? '&' : '?'}${q}`;
  const asCsvValues = (row: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(row).map(([k, v]) => [k, v !== null && typeof v === 'object' ? JSON.stringify(v) : neutral(v)]),
    );

  for (const k of Object.keys(structures) as (keyof typeof structures)[]) {
    it(`${k}: loads back with ClickHouse CSVWithNames to the JSON export (formulas neutralised)`, async () => {
      const json = (await getJson(A, url(k))).data as Record<string, unknown>[];
      expect(json.length).toBeGreaterThan(0);
      for (const q of ['format=csv', 'format=csv&stream=true']) {
        const csv = await get(A, withParam(url(k), q));
        expect(csv.statusCode).toBe(200);
        expect(csv.headers['content-disposition']).toBe(`attachment; filename="${k}.csv"`);
        const back = await readCsv(csv.body, structures[k]);
        expect(back, q).toEqual(json.map(asCsvValues));
      }
    });
  }

  it('neutralises formula cells and keeps quotes, commas and line breaks intact', async () => {
    const csv = (await get(A, '/export/network?format=csv')).body;
    expect(csv).toContain(`"'${tricky.url.replaceAll('"', '""')}"`);
    expect(csv).toContain(`"'${tricky.error.replaceAll('"', '""')}"`);
    expect(csv).toContain(`"'@GET"`);
    // an absent statusCode is an empty cell, not 0 or "null"
    const back = await readCsv(csv, structures.network);
    expect(back.find((r) => r.method === "'@GET")).toMatchObject({ statusCode: null, url: `'${tricky.url}` });
  });
});

describe('NDJSON and stream=true', () => {
  for (const k of ['sessions', 'crashes', 'events', 'network'] as const) {
    it(`${k}: ndjson pages and the stream carry the same rows as the JSON pages`, async () => {
      const base = k === 'events' ? `/export/events?sessionId=${sid.s1}` : `/export/${k}`;
      const join = (q: string) => `${base}${base.includes('?') ? '&' : '?'}${q}`;
      const json = (await getJson(A, join('limit=1000'))).data;
      const page = await get(A, join('format=ndjson&limit=1&page=2'));
      expect(page.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
      expect(page.headers['x-page']).toBe('2');
      expect(
        page.body
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l)),
      ).toEqual(json.slice(1, 2));
      for (const q of ['stream=true', 'stream=true&format=ndjson']) {
        const r = await get(A, join(q));
        expect(r.statusCode).toBe(200);
        expect(r.headers['transfer-encoding']).toBe('chunked');
        expect(r.body.endsWith('\n')).toBe(true);
        expect(
          r.body
            .trimEnd()
            .split('\n')
            .map((l) => JSON.parse(l)),
        ).toEqual(json);
      }
    });
  }

  it('streams an empty result as an empty body (NDJSON) or a header row (CSV)', async () => {
    const empty = await s.createProject('empty');
    expect((await get(empty, '/export/network?stream=true')).body).toBe('');
    expect((await get(empty, '/export/sessions?stream=true&format=csv')).body).toBe(
      '"id","userId","status","platform","osVersion","appVersion","networkType","eventCount","hasCrash","hasNetworkErrors","duration","startedAt","endedAt","updatedAt"\r\n',
    );
    expect((await get(empty, '/export/network?stream=true&format=csv')).body).toBe(
      '"id","sessionId","method","url","statusCode","duration","error","timestamp"\r\n',
    );
  });

  it('honours from/to in a stream', async () => {
    const r = await get(A, '/export/network?stream=true&to=2026-01-01');
    expect(r.body.trimEnd().split('\n')).toHaveLength(4);
  });
});

describe('gzip', () => {
  it('compresses JSON pages, CSV and streams when the client accepts gzip', async () => {
    for (const u of [
      '/export/sessions',
      '/export/network?format=csv',
      '/export/network?stream=true&format=csv',
      `/export/events?sessionId=${sid.s1}&stream=true`,
    ]) {
      const plain = await get(A, u);
      const gz = await get(A, u, { 'accept-encoding': 'gzip, deflate, br' });
      expect(gz.statusCode).toBe(200);
      expect(gz.headers['content-encoding'], u).toBe('gzip');
      expect(gz.headers.vary).toMatch(/Accept-Encoding/i);
      expect(gunzipSync(gz.rawPayload).toString('utf8')).toBe(plain.body);
      expect(plain.headers['content-encoding']).toBeUndefined();
    }
    const refused = await get(A, '/export/sessions', { 'accept-encoding': 'gzip;q=0, identity' });
    expect(refused.headers['content-encoding']).toBeUndefined();
  });
});

describe('page walk while rows are appended', () => {
  it('network: every row exactly once', async () => {
    const W = await s.createProject('walk');
    const ws = sessionStart();
    await post(W, '/ingest/session', ws);
    const ids: string[] = [];
    const add = async (n: number, at: number) => {
      const reqs = Array.from({ length: n }, (_, i) => networkRequest({ timestamp: at + i * 10, id: randomUUID() }));
      // Two rows per instant on purpose: the id breaks the tie.
      reqs.forEach((r, i) => {
        if (i % 2 === 1) r.timestamp = reqs[i - 1]!.timestamp;
      });
      await post(W, '/ingest/network', { sessionId: ws.sessionId, requests: reqs });
      ids.push(...reqs.map((r) => r.id as string));
    };
    await add(40, T0);
    const seen: string[] = [];
    let later = T0 + 10 * DAY;
    for (let page = 1, pages = 1; page <= pages; page++) {
      const body = await getJson(W, `/export/network?limit=7&page=${page}`);
      seen.push(...body.data.map((r: { id: string }) => r.id));
      pages = body.pages;
      if (page <= 6) {
        await add(3, later);
        later += DAY;
      }
    }
    expect(seen).toHaveLength(ids.length);
    expect(new Set(seen).size).toBe(ids.length);
    expect(new Set(seen)).toEqual(new Set(ids));
  });

  it('sessions: every row exactly once', async () => {
    const W = await s.createProject('walk-sessions');
    const ids: string[] = [];
    const add = async (n: number, at: number) => {
      for (let i = 0; i < n; i++) {
        const x = sessionStart({ startedAt: at + Math.floor(i / 2) });
        ids.push(x.sessionId);
        await post(W, '/ingest/session', x);
      }
    };
    await add(20, T0);
    const seen: string[] = [];
    let later = T0 + DAY;
    for (let page = 1, pages = 1; page <= pages; page++) {
      const body = await getJson(W, `/export/sessions?limit=6&page=${page}`);
      seen.push(...body.data.map((r: { id: string }) => r.id));
      pages = body.pages;
      if (page <= 4) {
        await add(2, later);
        later += DAY;
      }
    }
    expect(seen).toHaveLength(ids.length);
    expect(new Set(seen)).toEqual(new Set(ids));
  });
});
