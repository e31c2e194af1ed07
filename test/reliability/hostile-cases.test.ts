import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { countRows } from '../helpers/inspect.ts';
import * as P from '../helpers/payloads.ts';

// The fuzz test's findings, pinned as deterministic cases (the fuzz test is random).
let s: TestServer;
let auth: { authorization: string };
let projectId: string;
let sid: string;

beforeAll(async () => {
  s = await startTestServer();
  ({ auth, projectId } = await s.createProject('hostile'));
  const start = P.sessionStart();
  sid = start.sessionId;
  expect(
    (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: start })).statusCode,
  ).toBe(201);
});
afterAll(async () => {
  await s?.close();
});

/** Posts `payload` as the text it is (Fastify would serialise an object) with the project's key. */
const postText = (url: string, payload: string) =>
  s.app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'application/json' }, payload });

const nested = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

describe('hostile input, pinned', () => {
  it('custom properties nested 20,000 deep: 422 with a pointer, nothing stored (was a 500)', async () => {
    const ev = JSON.stringify({ ...P.customEvent(sid, 0), properties: { X: 1 } }).replace('{"X":1}', nested(20_000));
    const r = await postText('/ingest/events', `{"sessionId":"${sid}","events":[${ev}]}`);
    expect(r.statusCode).toBe(422);
    expect(r.json()).toEqual({
      error: 'Validation failed',
      code: 'validation_failed',
      details: [{ path: '/events/0/properties', message: 'must not nest deeper than 32 levels' }],
    });
    expect(await countRows(s, 'events', projectId)).toBe(0);
  });

  it('properties 32 levels deep are accepted', async () => {
    const ev = JSON.stringify({ ...P.customEvent(sid, 1), properties: { X: 1 } }).replace('{"X":1}', nested(32));
    const r = await postText('/ingest/events', `{"sessionId":"${sid}","events":[${ev}]}`);
    expect(r.statusCode).toBe(201);
  });

  it('a 100,000-deep body elsewhere is parsed and refused or ignored, never a 5xx', async () => {
    for (const body of [
      '['.repeat(100_000) + ']'.repeat(100_000),
      nested(100_000),
      `{"sessionId":"${sid}","junk":${nested(100_000)},"events":[]}`,
    ]) {
      const r = await postText('/ingest/events', body);
      expect(r.statusCode).toBeLessThan(500);
      expect(Object.keys(r.json()).sort()).toEqual(
        r.statusCode === 422
          ? ['code', 'details', 'error']
          : r.statusCode < 300
            ? ['count', 'ok']
            : r.statusCode === 400
              ? ['code', 'error', 'field']
              : ['code', 'error'],
      );
    }
  });

  it('NUL and lone surrogates (JSON escapes, in values and keys) are stored as U+FFFD; a valid pair is kept', async () => {
    const ev =
      `{"type":"custom","sessionId":"${sid}","timestamp":${P.T0},"sequenceNumber":50,"name":"bad\\u0000name",` +
      `"properties":{"lone":"x\\ud800y","k\\udc00":1,"emoji":"\\ud83d\\ude00"}}`;
    const r = await postText('/ingest/events', `{"sessionId":"${sid}","events":[${ev}]}`);
    expect(r.statusCode).toBe(201);
    const crash = `{"sessionId":"${sid}","message":"boom\\u0000","stackTrace":"at x","isFatal":false,"handled":true,"timestamp":${P.T0}}`;
    expect((await postText('/ingest/crash', crash)).statusCode).toBe(201);
    const [row] = await (await s.stores()).ch.query<{ data: string }>(
      'SELECT data FROM events FINAL WHERE project_id = {p:String} AND sequence_number = 50',
      { p: projectId },
    );
    expect(JSON.parse(row!.data)).toEqual({
      name: 'bad\uFFFDname',
      properties: { lone: 'x\uFFFDy', 'k\uFFFD': 1, emoji: '\u{1F600}' },
    });
    const g = await (await s.stores()).pg.query<{ message: string }>(
      'SELECT message FROM crash_groups WHERE project_id = $1',
      [projectId],
    );
    expect(g.rows.map((x) => x.message)).toContain('boom\uFFFD');
  });

  it('router-level errors carry the contract body: over-long path parameter (414), malformed URL (400)', async () => {
    const long = await s.app.inject({ method: 'GET', url: `/api/projects/${'a'.repeat(5000)}`, headers: s.admin });
    expect(long.statusCode).toBe(414);
    expect(long.json()).toEqual({ error: expect.any(String), code: 'uri_too_long' });
    const bad = await s.app.inject({ method: 'GET', url: '/api/projects/%zz', headers: s.admin });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: expect.any(String), code: 'bad_request' });
  });

  it('a gzip bomb stops at the body limit with 413', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(256 * 1024 * 1024), { level: 9 });
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/events',
      headers: { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: bomb,
    });
    expect(r.statusCode).toBe(413);
    expect(r.json()).toEqual({ error: expect.any(String), code: 'payload_too_large' });
  });

  it('__proto__ and constructor.prototype keys are refused with 400, nothing polluted', async () => {
    // Spelled out, spaced before the colon, escaped, and after another escape: each is the same
    // key once parsed, so each must be refused alike.
    for (const prefix of [
      '{"__proto__":{"polluted":1},',
      '{"constructor":{"prototype":{"polluted":1}},',
      '{"__proto__" \n :{"polluted":1},',
      '{"\\u005f_proto__":{"polluted":1},',
      '{"\\u0063onstructor":{"prototype":{"polluted":1}},',
      '{"a":"\\n","__proto__":{"polluted":1},',
    ]) {
      const body = prefix + JSON.stringify(P.sessionStart()).slice(1);
      const r = await postText('/ingest/session', body);
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual({ error: expect.any(String), code: 'invalid_json' });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('the words __proto__ and constructor as values, not keys, are accepted', async () => {
    const start = P.sessionStart();
    const body = JSON.stringify({ ...start, userId: '"constructor" and "__proto__"' });
    const r = await postText('/ingest/session', body);
    expect(r.statusCode).toBe(201);
  });

  it('numbers beyond 2^53 and out-of-range timestamps are 422, not stored', async () => {
    for (const n of ['9007199254740993', '1e400', '-1', '253402300800000']) {
      const body = JSON.stringify(P.sessionStart()).replace(/"startedAt":\d+/, `"startedAt":${n}`);
      const r = await postText('/ingest/session', body);
      expect(r.statusCode, n).toBe(422);
      expect(r.json().details[0].path).toBe('/startedAt');
    }
  });
});
