import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { countRows, crashGroups, outboxJobs, sessionRow } from '../helpers/inspect.ts';
import * as P from '../helpers/payloads.ts';

let s: TestServer;
let auth: { authorization: string };
let projectId: string;

beforeAll(async () => {
  s = await startTestServer();
  ({ auth, projectId } = await s.createProject('ingest'));
});
afterAll(async () => {
  await s?.close();
});

const post = (url: string, payload: unknown, headers: Record<string, string> = auth) =>
  s.app.inject({ method: 'POST', url, headers, payload: payload as object });

async function newSession(overrides: Record<string, unknown> = {}) {
  const body = P.sessionStart(overrides);
  const r = await post('/ingest/session', body);
  expect(r.statusCode).toBe(201);
  return body;
}

describe('POST /ingest/session', () => {
  it('stores a new session as active and answers 201 {ok:true}', async () => {
    const body = await newSession();
    const row = await sessionRow(s, projectId, body.sessionId);
    expect(row).toMatchObject({
      status: 'active',
      platform: 'ios',
      app_version: '1.4.0',
      started_at: P.T0,
      ended_at: null,
      user_id: 'user-1',
    });
  });

  it('is idempotent on sessionId: a repeat, even with other content, is ignored with 201', async () => {
    const body = await newSession();
    const again = await post('/ingest/session', { ...body, userId: 'someone-else' });
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual({ ok: true });
    const r = await (await s.stores()).pg.query('SELECT user_id FROM sessions WHERE project_id = $1 AND id = $2', [
      projectId,
      body.sessionId,
    ]);
    expect(r.rows).toEqual([{ user_id: 'user-1' }]);
  });

  it('answers 400 {error} for a missing required field, without details', async () => {
    const { device, ...noDevice } = P.sessionStart();
    const r = await post('/ingest/session', noDevice);
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual({ error: expect.stringContaining('device'), code: 'missing_field', field: '/device' });
  });

  it('answers 400 for a body that is not JSON, and stores nothing', async () => {
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"sessionId": ',
    });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual({ error: expect.any(String), code: 'invalid_json' });
  });

  it('answers 422 with JSON-pointer details for wrong types, enums and formats', async () => {
    const body = P.sessionStart({ sessionId: 'not-a-uuid', startedAt: '1700000000000' });
    (body.device as any).platform = 'symbian';
    const r = await post('/ingest/session', body);
    expect(r.statusCode).toBe(422);
    const paths = r
      .json()
      .details.map((d: any) => d.path)
      .sort();
    expect(paths).toEqual(['/device/platform', '/sessionId', '/startedAt']);
    expect(r.json().error).toEqual(expect.any(String));
    expect(await sessionRow(s, projectId, body.sessionId)).toBeUndefined();
  });

  it('refuses a non-JSON content type with a JSON error', async () => {
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: { ...auth, 'content-type': 'text/xml' },
      payload: '<a/>',
    });
    expect(r.statusCode).toBe(415);
    expect(r.json()).toEqual({ error: expect.any(String), code: 'unsupported_media_type' });
  });
});

describe('authentication', () => {
  it('answers 401 for a missing, malformed, unknown and deactivated key', async () => {
    const body = P.sessionStart();
    expect((await post('/ingest/session', body, {})).statusCode).toBe(401);
    expect((await post('/ingest/session', body, { authorization: 'Bearer nope' })).statusCode).toBe(401);
    expect((await post('/ingest/session', body, { authorization: 'Basic abc' })).statusCode).toBe(401);
    // well-formed (valid checksum) but never issued
    const { generateApiKey } = await import('../../src/domain/apiKey.ts');
    const unknown = await post('/ingest/session', body, { authorization: `Bearer ${generateApiKey()}` });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toEqual({ error: expect.any(String), code: 'unauthorized' });

    const k = await s.app.inject({ method: 'POST', url: `/api/projects/${projectId}/keys`, headers: s.admin });
    const key = k.json();
    const keyAuth = { authorization: `Bearer ${key.apiKey}` };
    expect((await post('/ingest/session', P.sessionStart(), keyAuth)).statusCode).toBe(201);
    const d = await s.app.inject({ method: 'POST', url: `/api/keys/${key.key.id}/deactivate`, headers: s.admin });
    expect(d.statusCode).toBe(200);
    const after = await post('/ingest/session', P.sessionStart(), keyAuth);
    expect(after.statusCode).toBe(401);
    expect(await sessionRow(s, projectId, body.sessionId)).toBeUndefined();
  });
});

describe('POST /ingest/session/end', () => {
  it('completes an active session with its duration', async () => {
    const body = await newSession();
    const r = await post('/ingest/session/end', { sessionId: body.sessionId, endedAt: P.T0 + 60_000 });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ ok: true });
    expect(await sessionRow(s, projectId, body.sessionId)).toMatchObject({
      status: 'completed',
      ended_at: P.T0 + 60_000,
    });
  });

  it('answers 200 for an unknown session and changes nothing', async () => {
    const r = await post('/ingest/session/end', { sessionId: randomUUID(), endedAt: P.T0 });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ ok: true });
  });

  it('keeps the first accepted endedAt; a retry is 200', async () => {
    const body = await newSession();
    await post('/ingest/session/end', { sessionId: body.sessionId, endedAt: P.T0 + 1000 });
    const again = await post('/ingest/session/end', { sessionId: body.sessionId, endedAt: P.T0 + 9000 });
    expect(again.statusCode).toBe(200);
    expect((await sessionRow(s, projectId, body.sessionId))!.ended_at).toBe(P.T0 + 1000);
  });

  it('refuses an end before the start with 422', async () => {
    const body = await newSession();
    const r = await post('/ingest/session/end', { sessionId: body.sessionId, endedAt: P.T0 - 1 });
    expect(r.statusCode).toBe(422);
    expect(r.json().details).toEqual([{ path: '/endedAt', message: expect.any(String) }]);
    expect(await sessionRow(s, projectId, body.sessionId)).toMatchObject({ status: 'active', ended_at: null });
  });

  it('never downgrades a crashed session, and gives it its duration', async () => {
    const body = await newSession();
    expect((await post('/ingest/crash', P.crash(body.sessionId))).statusCode).toBe(201);
    await post('/ingest/session/end', { sessionId: body.sessionId, endedAt: P.T0 + 10_000 });
    expect(await sessionRow(s, projectId, body.sessionId)).toMatchObject({
      status: 'crashed',
      has_crash: true,
      ended_at: P.T0 + 10_000,
    });
  });
});

describe('POST /ingest/events', () => {
  it('stores a batch and answers 201 with the count; a retry duplicates nothing', async () => {
    const { projectId: p, auth: a } = await s.createProject('events-idem');
    const body = P.sessionStart();
    await post('/ingest/session', body, a);
    const sid = body.sessionId;
    const batch = {
      sessionId: sid,
      events: [P.navigate(sid, 0), P.tapEvent(sid, 1), P.customEvent(sid, 2), P.networkEvent(sid, 3)],
    };
    const r = await post('/ingest/events', batch, a);
    expect(r.statusCode).toBe(201);
    expect(r.json()).toEqual({ ok: true, count: 4 });
    for (let i = 0; i < 3; i++) expect((await post('/ingest/events', batch, a)).statusCode).toBe(201);
    expect(await countRows(s, 'events', p)).toBe(4);
    // the network event is mirrored into the network logs, once
    expect(await countRows(s, 'network_logs', p)).toBe(1);
    const rows = await (await s.stores()).ch.query<any>(
      'SELECT type, sequence_number, data FROM events FINAL WHERE project_id = {p:String} ORDER BY sequence_number',
      { p },
    );
    expect(rows.map((x) => x.type)).toEqual(['navigate', 'tap', 'custom', 'network']);
    expect(JSON.parse(rows[0].data)).toEqual({ from: null, to: '/screen/0' });
    expect(JSON.parse(rows[2].data)).toEqual({ name: 'purchase', properties: { sku: 'A1', amount: 3 } });
    // stored as the JSON text of the object, byte for byte (the export reads this text)
    expect(rows[2].data).toBe('{"name":"purchase","properties":{"sku":"A1","amount":3}}');
  });

  it('collapses a batch retried concurrently, whose copies land in one insert (one spool load)', async () => {
    // Inserts do not collapse duplicates inside a block (optimize_on_insert = 0); reads with FINAL must.
    const { projectId: p, auth: a } = await s.createProject('events-concurrent-retry');
    const body = P.sessionStart();
    await post('/ingest/session', body, a);
    const sid = body.sessionId;
    const batch = {
      sessionId: sid,
      events: Array.from({ length: 50 }, (_, i) => (i % 2 ? P.tapEvent(sid, i) : P.networkEvent(sid, i))),
    };
    const rs = await Promise.all(Array.from({ length: 4 }, () => post('/ingest/events', batch, a)));
    expect(rs.map((r) => r.statusCode)).toEqual([201, 201, 201, 201]);
    expect(await countRows(s, 'events', p)).toBe(50);
    expect(await countRows(s, 'network_logs', p)).toBe(25);
  });

  it('answers 404 for an unknown session and for a session of another project', async () => {
    const sid = randomUUID();
    const r = await post('/ingest/events', { sessionId: sid, events: [P.navigate(sid, 0)] });
    expect(r.statusCode).toBe(404);
    expect(r.json()).toEqual({ error: expect.any(String), code: 'not_found' });
    const other = await s.createProject('other');
    const body = P.sessionStart();
    await post('/ingest/session', body, other.auth);
    const foreign = await post('/ingest/events', {
      sessionId: body.sessionId,
      events: [P.navigate(body.sessionId, 0)],
    });
    expect(foreign.statusCode).toBe(404);
    expect(await countRows(s, 'events', other.projectId)).toBe(0);
  });

  it('accepts 500 events and refuses 501 with 422', async () => {
    const { sessionId: sid } = await newSession();
    const ok = await post('/ingest/events', {
      sessionId: sid,
      events: Array.from({ length: 500 }, (_, i) => P.navigate(sid, i)),
    });
    expect(ok.json()).toEqual({ ok: true, count: 500 });
    const tooMany = await post('/ingest/events', {
      sessionId: sid,
      events: Array.from({ length: 501 }, (_, i) => P.navigate(sid, i)),
    });
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json().details[0].path).toBe('/events');
  });

  it('refuses events whose sessionId differs from the batch, and events of a wrong type, with 422', async () => {
    const { sessionId: sid } = await newSession();
    const other = randomUUID();
    const r = await post('/ingest/events', { sessionId: sid, events: [P.navigate(sid, 0), P.navigate(other, 1)] });
    expect(r.statusCode).toBe(422);
    expect(r.json().details).toEqual([{ path: '/events/1/sessionId', message: expect.any(String) }]);
    const bad = await post('/ingest/events', {
      sessionId: sid,
      events: [
        { ...P.tapEvent(sid, 0), x: 'left' },
        { ...P.navigate(sid, 1), type: 'swipe' },
      ],
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().details.map((d: any) => d.path)).toEqual(
      expect.arrayContaining(['/events/0/x', '/events/1/type']),
    );
    // ajv's keyword and params ride along, for a client to word the problem without parsing `message`.
    expect(bad.json().details).toEqual(
      expect.arrayContaining([
        { path: '/events/0/x', message: 'must be number', keyword: 'type', params: { type: 'number' } },
        {
          path: '/events/1/type',
          message: expect.any(String),
          keyword: 'enum',
          params: { allowedValues: ['navigate', 'network', 'custom', 'tap'] },
        },
      ]),
    );
  });

  it('answers 400 when a type-specific required field is missing', async () => {
    const { sessionId: sid } = await newSession();
    const { to, ...noTo } = P.navigate(sid, 0);
    const r = await post('/ingest/events', { sessionId: sid, events: [noTo] });
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toContain('/events/0/to');
  });

  it('sets hasNetworkErrors from a mirrored network event with status >= 400 or an error', async () => {
    const a = await newSession();
    await post('/ingest/events', { sessionId: a.sessionId, events: [P.networkEvent(a.sessionId, 0, 200)] });
    expect((await sessionRow(s, projectId, a.sessionId))!.has_network_errors).toBe(false);
    await post('/ingest/events', { sessionId: a.sessionId, events: [P.networkEvent(a.sessionId, 1, 503)] });
    expect((await sessionRow(s, projectId, a.sessionId))!.has_network_errors).toBe(true);
    const b = await newSession();
    const connErr = { ...P.networkEvent(b.sessionId, 0), statusCode: undefined, error: 'connection refused' };
    delete (connErr as any).statusCode;
    expect((await post('/ingest/events', { sessionId: b.sessionId, events: [connErr] })).statusCode).toBe(201);
    expect((await sessionRow(s, projectId, b.sessionId))!.has_network_errors).toBe(true);
  });
});

describe('POST /ingest/network', () => {
  it('stores requests, answers 201 with the count, and a retry duplicates nothing', async () => {
    const { projectId: p, auth: a } = await s.createProject('network');
    const body = P.sessionStart();
    await post('/ingest/session', body, a);
    const batch = { sessionId: body.sessionId, requests: [P.networkRequest(), P.networkRequest({ statusCode: 200 })] };
    const r = await post('/ingest/network', batch, a);
    expect(r.statusCode).toBe(201);
    expect(r.json()).toEqual({ ok: true, count: 2 });
    await post('/ingest/network', batch, a);
    expect(await countRows(s, 'network_logs', p)).toBe(2);
    expect((await sessionRow(s, p, body.sessionId))!.has_network_errors).toBe(false);
    await post('/ingest/network', { sessionId: body.sessionId, requests: [P.networkRequest({ statusCode: 404 })] }, a);
    expect((await sessionRow(s, p, body.sessionId))!.has_network_errors).toBe(true);
  });

  it('refuses more than 200 requests, a non-UUID id, and an unknown session', async () => {
    const { sessionId: sid } = await newSession();
    const tooMany = await post('/ingest/network', {
      sessionId: sid,
      requests: Array.from({ length: 201 }, () => P.networkRequest()),
    });
    expect(tooMany.statusCode).toBe(422);
    const badId = await post('/ingest/network', { sessionId: sid, requests: [P.networkRequest({ id: 'req-1' })] });
    expect(badId.statusCode).toBe(422);
    expect(badId.json().details[0].path).toBe('/requests/0/id');
    const unknown = await post('/ingest/network', { sessionId: randomUUID(), requests: [P.networkRequest()] });
    expect(unknown.statusCode).toBe(404);
  });
});

describe('POST /ingest/crash', () => {
  it('answers 404 for an unknown session', async () => {
    const r = await post('/ingest/crash', P.crash(randomUUID()));
    expect(r.statusCode).toBe(404);
  });

  it('groups by the first five stack lines, counts occurrences, devices and keeps the latest context', async () => {
    const { projectId: p, auth: a } = await s.createProject('crashes');
    const s1 = P.sessionStart();
    const s2 = P.sessionStart();
    (s2.device as any).model = 'Pixel 8';
    (s2.device as any).platform = 'android';
    (s2.device as any).appVersion = '1.5.0';
    await post('/ingest/session', s1, a);
    await post('/ingest/session', s2, a);
    const c1 = P.crash(s1.sessionId, { isFatal: false, handled: true });
    expect((await post('/ingest/crash', c1, a)).statusCode).toBe(201);
    // retry of the same payload adds nothing
    expect((await post('/ingest/crash', c1, a)).json()).toEqual({ ok: true });
    // same device, same head, different sixth line → same group, same device
    await post(
      '/ingest/crash',
      P.crash(s1.sessionId, {
        isFatal: false,
        handled: true,
        timestamp: P.T0 + 9500,
        stackTrace: c1.stackTrace.replace('more.js', 'other.js'),
      }),
      a,
    );
    // another device, later
    await post('/ingest/crash', P.crash(s2.sessionId, { timestamp: P.T0 + 20_000 }), a);
    // a different head → another group
    await post(
      '/ingest/crash',
      P.crash(s2.sessionId, { stackTrace: 'at elsewhere (x.js:1:1)', timestamp: P.T0 + 30_000 }),
      a,
    );

    const groups = await crashGroups(s, p);
    expect(groups).toHaveLength(2);
    expect(groups[0]).toMatchObject({
      occurrence_count: 3,
      affected_devices: 2,
      platform: 'android',
      app_version: '1.5.0',
      first_seen_at: P.T0 + 9000,
      last_seen_at: P.T0 + 20_000,
      status: 'open',
      is_fatal: true,
      handled: false,
    });
    expect(groups[0]!.app_versions.sort()).toEqual(['1.4.0', '1.5.0']);
    expect(groups[1]).toMatchObject({ occurrence_count: 1, affected_devices: 1 });
    // exactly one outbox job per new group
    expect((await outboxJobs(s, p)).length).toBe(2);
    // non-fatal crash marks hasCrash but keeps the session active
    expect(await sessionRow(s, p, s1.sessionId)).toMatchObject({ status: 'active', has_crash: true });
    expect(await sessionRow(s, p, s2.sessionId)).toMatchObject({ status: 'crashed', has_crash: true });
  });

  // The race this is named for, concurrent transactions each finding the group new, needs
  // concurrent connections: on real Postgres (DATABASE_URL, as .ci/run's second pass sets) the
  // 20 requests run their crash transactions at once on the pool. PGlite, the default, runs one
  // query at a time, so there this only checks the outcome.
  it('creates one group and one job under concurrent first occurrences', async () => {
    expect((await s.stores()).pg.kind).toBe(process.env.DATABASE_URL ? 'pg' : 'pglite');
    const { projectId: p, auth: a } = await s.createProject('concurrent');
    const body = P.sessionStart();
    await post('/ingest/session', body, a);
    const rs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post('/ingest/crash', P.crash(body.sessionId, { timestamp: P.T0 + i }), a)),
    );
    expect(rs.every((r) => r.statusCode === 201)).toBe(true);
    const groups = await crashGroups(s, p);
    expect(groups).toHaveLength(1);
    expect(groups[0]!.occurrence_count).toBe(20);
    expect(await outboxJobs(s, p)).toHaveLength(1);
  });
});

describe('transport', () => {
  it('accepts gzip bodies', async () => {
    const body = P.sessionStart();
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: zlib.gzipSync(JSON.stringify(body)),
    });
    expect(r.statusCode).toBe(201);
    expect(await sessionRow(s, projectId, body.sessionId)).toBeDefined();
  });

  it('answers 400 for a corrupt gzip body and 415 for an unknown encoding', async () => {
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: Buffer.from('not gzip at all'),
    });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual({ error: expect.any(String), code: 'bad_request' });
    const br = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: { ...auth, 'content-type': 'application/json', 'content-encoding': 'br' },
      payload: '{}',
    });
    expect(br.statusCode).toBe(415);
  });

  it('answers 413 for a body over 5 MiB, plain or as a gzip bomb', async () => {
    const { sessionId: sid } = await newSession();
    const big = JSON.stringify({
      sessionId: sid,
      events: [{ ...P.customEvent(sid, 0), properties: { blob: 'x'.repeat(6 * 1024 * 1024) } }],
    });
    const r = await post('/ingest/events', big, { ...auth, 'content-type': 'application/json' });
    expect(r.statusCode).toBe(413);
    expect(r.json()).toEqual({ error: expect.any(String), code: 'payload_too_large' });
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const rb = await s.app.inject({
      method: 'POST',
      url: '/ingest/events',
      headers: { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: bomb,
    });
    expect(rb.statusCode).toBe(413);
  });
});

describe('restart', () => {
  it('keeps what was acknowledged, and retries after a restart still duplicate nothing', async () => {
    const { projectId: p, auth: a } = await s.createProject('restart');
    const body = P.sessionStart();
    await post('/ingest/session', body, a);
    const batch = {
      sessionId: body.sessionId,
      events: [P.navigate(body.sessionId, 0), P.networkEvent(body.sessionId, 1, 500)],
    };
    await post('/ingest/events', batch, a);
    await post('/ingest/crash', P.crash(body.sessionId), a);
    await s.close();
    s = await startTestServer({}, s.dataDir);
    expect((await post('/ingest/session', body, a)).statusCode).toBe(201);
    expect((await post('/ingest/events', batch, a)).statusCode).toBe(201);
    expect((await post('/ingest/crash', P.crash(body.sessionId), a)).statusCode).toBe(201);
    expect(await countRows(s, 'events', p)).toBe(2);
    expect(await countRows(s, 'network_logs', p)).toBe(1);
    expect((await crashGroups(s, p))[0]!.occurrence_count).toBe(1);
    expect(await sessionRow(s, p, body.sessionId)).toMatchObject({ status: 'crashed', has_network_errors: true });
  });
});

describe('content types', () => {
  it('refuses text/plain and a missing content type with 415 and a JSON error', async () => {
    for (const headers of [{ ...auth, 'content-type': 'text/plain' }, { ...auth }]) {
      const r = await s.app.inject({
        method: 'POST',
        url: '/ingest/session',
        headers,
        payload: JSON.stringify(P.sessionStart()),
      });
      expect(r.statusCode).toBe(415);
      expect(r.json()).toEqual({ error: expect.any(String), code: 'unsupported_media_type' });
    }
  });
});
