import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { customEvent, navigate, networkRequest, sessionStart, tapEvent } from '../helpers/payloads.ts';

// How ingest bodies are read: identifiers' case, numbers, spellings ClickHouse reads otherwise,
// the cost of a body.
let s: TestServer;
let p: Awaited<ReturnType<TestServer['createProject']>>;
beforeAll(async () => {
  s = await startTestServer();
  p = await s.createProject();
});
afterAll(async () => {
  await s?.close();
});

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  s.app.inject({ method: 'POST', url, headers: { ...p.auth, ...headers }, payload: payload as string });

async function newSession(over: Record<string, unknown> = {}) {
  const st = sessionStart(over);
  expect((await post('/ingest/session', st)).statusCode).toBe(201);
  return st.sessionId as string;
}

describe('identifiers are compared without regard to case', () => {
  it('upper-case session and request ids are stored lower-case; the session finds its events and requests', async () => {
    const sid = crypto.randomUUID();
    const SID = sid.toUpperCase();
    await newSession({ sessionId: SID });
    // Batch in upper case, events in both spellings: one session.
    const ev = await post('/ingest/events', { sessionId: SID, events: [navigate(sid, 0), navigate(SID, 1)] });
    expect(ev.statusCode).toBe(201);
    const rid = crypto.randomUUID();
    expect(
      (await post('/ingest/network', { sessionId: sid, requests: [networkRequest({ id: rid.toUpperCase() })] }))
        .statusCode,
    ).toBe(201);
    await s.settled();

    for (const q of [sid, SID]) {
      const r = await s.app.inject({ method: 'GET', url: `/export/events?sessionId=${q}`, headers: p.auth });
      expect(r.json().total).toBe(2);
    }
    const sessions = (
      await s.app.inject({ method: 'GET', url: '/export/sessions?limit=1000', headers: p.auth })
    ).json();
    expect(sessions.data.map((x: { id: string }) => x.id)).toContain(sid);
    expect(sessions.data.find((x: { id: string }) => x.id === sid).eventCount).toBe(2);
    const net = (await s.app.inject({ method: 'GET', url: '/export/network?limit=1000', headers: p.auth })).json();
    expect(net.data.map((x: { id: string }) => x.id)).toContain(rid);
  });
});

describe('a UUID is spelled as the stores read it', () => {
  it('`urn:uuid:` ids are a 422 naming the field (a session start with one was a 500, a request id was stored with it)', async () => {
    const id = crypto.randomUUID();
    const start = await post('/ingest/session', sessionStart({ sessionId: `urn:uuid:${id}` }));
    expect(start.statusCode).toBe(422);
    expect(start.json().details[0]).toMatchObject({ path: '/sessionId', keyword: 'format' });
    const sid = await newSession();
    const net = await post('/ingest/network', { sessionId: sid, requests: [networkRequest({ id: `urn:uuid:${id}` })] });
    expect(net.statusCode).toBe(422);
    expect(net.json().details[0]).toMatchObject({ path: '/requests/0/id', keyword: 'format' });
    await s.settled();
    const stored = (await s.app.inject({ method: 'GET', url: '/export/network?limit=1000', headers: p.auth })).json();
    expect(stored.data.filter((r: { id: string }) => r.id.includes(id))).toEqual([]);
  });
});

describe('non-finite numbers', () => {
  it('1e400 is a 422 pointing at it, in a field and inside custom properties; 1e300 is stored', async () => {
    const sid = await newSession();
    const text =
      `{"sessionId":"${sid}","events":[${JSON.stringify(tapEvent(sid, 0)).replace('"x":10.5', '"x":1e400')},` +
      `${JSON.stringify(customEvent(sid, 1)).replace('"amount":3', '"amount":{"deep":[1,-1E+400]}')}]}`;
    const r = await post('/ingest/events', text, { 'content-type': 'application/json' });
    expect(r.statusCode).toBe(422);
    expect(r.json().details).toEqual([
      { path: '/events/0/x', message: 'must be a finite number' },
      { path: '/events/1/properties/amount/deep/1', message: 'must be a finite number' },
    ]);
    // 308 nines and e1: a two-digit exponent, still beyond a double (the third probe's case).
    const nines = `{"sessionId":"${sid}","events":[${JSON.stringify(customEvent(sid, 3)).replace('"amount":3', `"amount":${'9'.repeat(308)}e1`)}]}`;
    const r2 = await post('/ingest/events', nines, { 'content-type': 'application/json' });
    expect(r2.statusCode).toBe(422);
    expect(r2.json().details).toEqual([{ path: '/events/0/properties/amount', message: 'must be a finite number' }]);
    const ok = `{"sessionId":"${sid}","events":[${JSON.stringify(customEvent(sid, 2)).replace('"amount":3', '"amount":1e300')}]}`;
    expect((await post('/ingest/events', ok, { 'content-type': 'application/json' })).statusCode).toBe(201);
  });
});

describe('bodies ClickHouse reads differently from JavaScript', () => {
  // The engine reads a body's bytes as the stored types: integers spelled 1.0 or 1e3 are valid
  // JSON integers it will not read as UInt64, so such a body is written as serialised instead.
  it('integers spelled 1.0 and 1e3 are stored as their values, sharing a batch with ordinary bodies', async () => {
    const sid = await newSession();
    const other = await newSession();
    const text =
      `{"sessionId":"${sid}","events":[` +
      `{"type":"navigate","sessionId":"${sid}","timestamp":1.767225600001e12,"sequenceNumber":1.0,"from":null,"to":"/a"},` +
      `{"type":"network","sessionId":"${sid}","timestamp":1767225600002,"sequenceNumber":2e0,"method":"GET","url":"https://x/y","statusCode":5.03e2,"duration":2.0E1}]}`;
    const net = `{"sessionId":"${sid}","requests":[{"id":"${crypto.randomUUID()}","method":"POST","url":"https://x/z","statusCode":2e2,"duration":1e1,"requestSize":1.0,"timestamp":1767225600003.0}]}`;
    const rs = await Promise.all([
      post('/ingest/events', text, { 'content-type': 'application/json' }),
      post('/ingest/network', net, { 'content-type': 'application/json' }),
      post('/ingest/events', { sessionId: other, events: [navigate(other, 0), navigate(other, 1)] }),
    ]);
    expect(rs.map((r) => r.statusCode)).toEqual([201, 201, 201]);
    await s.settled();
    const ev = (await s.app.inject({ method: 'GET', url: `/export/events?sessionId=${sid}`, headers: p.auth })).json();
    expect(ev.data.map((e: any) => [e.sequenceNumber, e.timestamp, e.data])).toEqual([
      [1, '2026-01-01T00:00:00.001Z', { from: null, to: '/a' }],
      [
        2,
        '2026-01-01T00:00:00.002Z',
        { method: 'GET', url: 'https://x/y', statusCode: 503, duration: 20, error: null },
      ],
    ]);
    expect(
      (await s.app.inject({ method: 'GET', url: `/export/events?sessionId=${other}`, headers: p.auth })).json().total,
    ).toBe(2);
    const logs = (await s.app.inject({ method: 'GET', url: '/export/network?limit=1000', headers: p.auth })).json();
    expect(
      logs.data.filter((n: any) => n.sessionId === sid).map((n: any) => [n.url, n.statusCode, n.duration, n.timestamp]),
    ).toEqual([
      ['https://x/y', 503, 20, '2026-01-01T00:00:00.002Z'],
      ['https://x/z', 200, 10, '2026-01-01T00:00:00.003Z'],
    ]);
  });

  it('a pretty-printed body is stored without its line breaks (custom properties included)', async () => {
    const sid = await newSession();
    const text = JSON.stringify({ sessionId: sid, events: [customEvent(sid, 0), navigate(sid, 1)] }, null, 2);
    expect(text).toContain('\n');
    expect((await post('/ingest/events', text, { 'content-type': 'application/json' })).statusCode).toBe(201);
    await s.settled();
    const nd = await s.app.inject({
      method: 'GET',
      url: `/export/events?sessionId=${sid}&format=ndjson`,
      headers: p.auth,
    });
    const lines = nd.body.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0]!).data).toEqual({
      name: customEvent(sid, 0).name,
      properties: customEvent(sid, 0).properties,
    });
  });
});

describe('body cost', () => {
  const gz = (text: string) => zlib.gzipSync(text);
  const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };

  it('a 5 KB gzip body of 1.7 million empty events is refused before it is parsed', async () => {
    const sid = await newSession();
    const n = Math.floor((5 * 1024 * 1024 - 100) / 3);
    const text = `{"sessionId":"${sid}","events":[${Array(n).fill('{}').join(',')}]}`;
    const body = gz(text);
    expect(body.length).toBeLessThan(8 * 1024);
    const r = await post('/ingest/events', body, headers);
    expect(r.statusCode).toBe(422);
    expect(r.json().details).toEqual([
      { path: '/events', message: 'must NOT have more than 500 items', keyword: 'maxItems', params: { limit: 500 } },
    ]);
    // Refused before it is parsed (before the fix JSON.parse held the event loop, then the schema
    // check ran out of memory on the per-element errors): the same body broken at its end is
    // still refused for its length, not answered as malformed JSON, which a parse would find.
    const broken = await post('/ingest/events', gz(`${text.slice(0, -2)}}{`), headers);
    expect(broken.statusCode).toBe(422);
    expect(broken.json().details[0]).toMatchObject({ path: '/events', keyword: 'maxItems' });

    const bare = await post('/ingest/network', gz(`[${Array(n).fill('{}').join(',')}]`), headers);
    expect(bare.statusCode).toBe(422);
    expect(bare.json().details).toEqual([
      { path: '/', message: 'must be object', keyword: 'type', params: { type: 'object' } },
    ]);
  });

  it('a small body over the limit is one maxItems error, not one per element (checked once parsed)', async () => {
    const sid = await newSession();
    const text = `{"sessionId":"${sid}","events":[${Array(501).fill('{}').join(',')}]}`;
    expect(text.length).toBeLessThan(16 * 1024);
    const r = await post('/ingest/events', text, { 'content-type': 'application/json' });
    expect(r.statusCode).toBe(422);
    expect(r.json().details).toEqual([
      { path: '/events', message: 'must NOT have more than 500 items', keyword: 'maxItems', params: { limit: 500 } },
    ]);
    // 40 KB of requests, past the pre-parse scan's size and under the pre-scan of arrays.
    const big = { sessionId: sid, requests: Array.from({ length: 201 }, () => networkRequest()) };
    const nr = await post('/ingest/network', big);
    expect(JSON.stringify(big).length).toBeGreaterThan(16 * 1024);
    expect(nr.statusCode).toBe(422);
    expect(nr.json().details).toEqual([
      { path: '/requests', message: 'must NOT have more than 200 items', keyword: 'maxItems', params: { limit: 200 } },
    ]);
  });

  it('500 events with commas inside their strings still pass the scan', async () => {
    const sid = await newSession();
    const events = Array.from({ length: 500 }, (_, i) => navigate(sid, i, `/a,b,"c",[d],{e}\\,${i}`));
    const r = await post('/ingest/events', { sessionId: sid, events });
    expect(r.statusCode).toBe(201);
    expect(r.json().count).toBe(500);
  });
});
