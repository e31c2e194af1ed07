import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.ts';
import { countRows } from '../helpers/inspect.ts';
import { startClickHouseStandIn, type ClickHouseStandIn } from '../helpers/clickhouseStandIn.ts';
import * as P from '../helpers/payloads.ts';
import { openClickHouseHttp } from '../../src/stores/clickhouse/http.ts';
import { ingestLine } from '../../src/repos/ingestLines.ts';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

// The ClickHouse-server path: the service talks to "ClickHouse" over HTTP through
// @clickhouse/client (src/stores/clickhouse/http.ts). No ClickHouse server can be installed here,
// so a stand-in answers ClickHouse's HTTP interface with the chDB engine in its own process.

let shim: ClickHouseStandIn;
let s: TestServer;
let shimUrl: string;

beforeAll(async () => {
  shim = await startClickHouseStandIn(tempDataDir());
  shimUrl = shim.url;
  s = await startTestServer({ CLICKHOUSE_URL: shimUrl });
});
afterAll(async () => {
  await s?.close();
  shim?.child.kill();
});

describe('ClickHouse over HTTP (@clickhouse/client)', () => {
  it('runs the migrations, ingests exactly once under retries, and exports every format', async () => {
    expect(s.svc.stores.ch.kind).toBe('http');
    const { projectId, auth } = await s.createProject('http');
    const start = P.sessionStart();
    const sid = start.sessionId;
    const post = (url: string, payload: object) => s.app.inject({ method: 'POST', url, headers: auth, payload });
    expect((await post('/ingest/session', start)).statusCode).toBe(201);
    const batch = {
      sessionId: sid,
      events: [P.navigate(sid, 0), P.tapEvent(sid, 1), P.customEvent(sid, 2), P.networkEvent(sid, 3, 502)],
    };
    for (let i = 0; i < 3; i++) expect((await post('/ingest/events', batch)).json()).toEqual({ ok: true, count: 4 });
    const requests = { sessionId: sid, requests: [P.networkRequest({ url: '=HYPERLINK("x")' })] };
    for (let i = 0; i < 2; i++) expect((await post('/ingest/network', requests)).statusCode).toBe(201);
    expect(await countRows(s, 'events', projectId)).toBe(4);
    expect(await countRows(s, 'network_logs', projectId)).toBe(2);

    const get = (url: string) => s.app.inject({ method: 'GET', url, headers: auth });
    const events = (await get(`/export/events?sessionId=${sid}`)).json();
    expect(events.total).toBe(4);
    expect(events.data.map((e: any) => e.type)).toEqual(['navigate', 'tap', 'custom', 'network']);
    expect(events.data[2].data).toEqual({ name: 'purchase', properties: { sku: 'A1', amount: 3 } });
    expect(events.data[0].timestamp).toBe(new Date(P.T0 + 1000).toISOString());

    const sessions = (await get('/export/sessions')).json();
    expect(sessions.data[0]).toMatchObject({ id: sid, eventCount: 4, hasNetworkErrors: true });

    const csv = await get('/export/network?format=csv');
    expect(csv.headers['content-type']).toContain('text/csv');
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('"id","sessionId","method","url","statusCode","duration","error","timestamp"');
    expect(lines).toHaveLength(3);
    expect(csv.body).toContain(`"'=HYPERLINK(""x"")"`);

    const ndjson = await get(`/export/events?sessionId=${sid}&stream=true`);
    expect(
      ndjson.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).sequenceNumber),
    ).toEqual([0, 1, 2, 3]);

    // Parquet is binary: the adapter must hand the server's bytes through untouched.
    for (const q of ['format=parquet', 'format=parquet&stream=true']) {
      const pq = await get(`/export/events?sessionId=${sid}&${q}`);
      expect(pq.headers['content-type']).toBe('application/vnd.apache.parquet');
      const b = pq.rawPayload;
      const rows = await parquetReadObjects({
        file: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer,
        compressors,
      });
      expect(
        rows.map((r) => Number(r.sequenceNumber)),
        q,
      ).toEqual([0, 1, 2, 3]);
      expect(rows.map((r) => (r.timestamp as Date).toISOString())).toEqual(events.data.map((e: any) => e.timestamp));
    }
  });

  it('stores a body as JavaScript read it when ClickHouse reads its bytes differently (a key given twice)', async () => {
    const { auth } = await s.createProject('dup');
    const start = P.sessionStart();
    const sid = start.sessionId;
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: start })).statusCode,
    ).toBe(201);
    // JSON.parse keeps the last of two equal keys; ClickHouse refuses such an object outright.
    const raw = `{"sessionId":"${sid}","events":[{"type":"tap","sessionId":"${sid}","timestamp":${P.T0},"sequenceNumber":0,"x":1,"y":2,"x":5}]}`;
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/events',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: raw,
    });
    expect(r.json()).toEqual({ ok: true, count: 1 });
    const events = (
      await s.app.inject({ method: 'GET', url: `/export/events?sessionId=${sid}`, headers: auth })
    ).json();
    expect(events.data.map((e: { data: unknown }) => e.data)).toEqual([{ x: 5, y: 2, target: null }]);
  });

  it('with CLICKHOUSE_ASYNC_INSERT, an insert answers once its rows are written', async () => {
    const ch = await openClickHouseHttp({
      url: shimUrl,
      user: 'default',
      password: '',
      database: 'default',
      asyncInsert: true,
    });
    try {
      const { projectId } = await s.createProject('async');
      const sid = P.sessionStart().sessionId;
      const body = Buffer.from(
        JSON.stringify({ sessionId: sid, events: [P.navigate(sid, 0), P.networkEvent(sid, 1, 503)] }),
      );
      // a line that carries its session's network-error flag (for the spool's loader): the engine skips the key
      await ch.insertBytes('ingest', ingestLine(projectId, body, sid), 'JSONEachRow');
      expect(await countRows(s, 'events', projectId)).toBe(2);
      expect(await countRows(s, 'network_logs', projectId)).toBe(1);
    } finally {
      await ch.close();
    }
  });
});
