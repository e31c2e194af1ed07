import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
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

// Small stream chunks: every stream below is several chunk files joined into one Parquet file.
const CHUNK = 2;

let s: TestServer;
type Project = Awaited<ReturnType<TestServer['createProject']>>;
let A: Project;
let sid1 = '';

async function post(url: string, payload: object) {
  const r = await s.app.inject({ method: 'POST', url, headers: A.auth, payload });
  if (r.statusCode >= 300) throw new Error(`${url}: ${r.statusCode} ${r.body}`);
}
const get = (url: string, headers: Record<string, string> = {}) =>
  s.app.inject({ method: 'GET', url, headers: { ...A.auth, ...headers } });

const toArrayBuffer = (b: Buffer) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

/** Reads a Parquet file with hyparquet, a Parquet reader independent of both writers. */
async function readParquet(b: Buffer) {
  const file = toArrayBuffer(b);
  return {
    meta: parquetMetadata(file),
    rows: (await parquetReadObjects({ file, compressors })) as Record<string, unknown>[],
  };
}

/** The JSON export's row as a Parquet reader returns it: timestamps as Dates, integers as BigInt, `data` as its JSON text. */
function asParquetValues(row: Record<string, unknown>, types: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(row).map(([k, v]) => {
      if (v === null) return [k, null];
      if (types[k] === 'timestamp') return [k, new Date(String(v))];
      if (types[k] === 'int64') return [k, BigInt(v as number)];
      if (typeof v === 'object') return [k, JSON.stringify(v)];
      return [k, v];
    }),
  );
}

// The declared type of each exported field (what the Parquet schema must say).
const TYPES: Record<string, Record<string, string>> = {
  sessions: {
    eventCount: 'int64',
    duration: 'int64',
    startedAt: 'timestamp',
    endedAt: 'timestamp',
    updatedAt: 'timestamp',
    hasCrash: 'boolean',
    hasNetworkErrors: 'boolean',
  },
  crashes: {
    occurrenceCount: 'int64',
    affectedDevices: 'int64',
    firstSeenAt: 'timestamp',
    lastSeenAt: 'timestamp',
    updatedAt: 'timestamp',
    isFatal: 'boolean',
    handled: 'boolean',
  },
  events: { timestamp: 'timestamp', sequenceNumber: 'int64' },
  network: { timestamp: 'timestamp', duration: 'int64', statusCode: 'int32' },
};

beforeAll(async () => {
  s = await startTestServer({
    EXPORT_CHUNK_ROWS: String(CHUNK),
    RATE_LIMIT_EXPORT_PER_MIN: '100000',
    RATE_LIMIT_INGEST_PER_MIN: '100000',
  });
  A = await s.createProject('A');
  for (let i = 0; i < 5; i++) {
    const st = sessionStart({ startedAt: T0 + i * 1000, ...(i === 1 ? { userId: undefined } : {}) });
    if (i === 0) sid1 = st.sessionId;
    await post('/ingest/session', st);
    const id = st.sessionId;
    await post('/ingest/events', {
      sessionId: id,
      events: [navigate(id, 0), networkEvent(id, 1, i === 2 ? 500 : 200), customEvent(id, 2), tapEvent(id, 3)],
    });
    await post('/ingest/network', {
      sessionId: id,
      requests: [
        networkRequest({ timestamp: T0 + i * 1000 + 5 }),
        networkRequest({ timestamp: T0 + i * 1000 + 6, statusCode: undefined, error: 'reset' }),
      ],
    });
    if (i % 2 === 0)
      await post(
        '/ingest/crash',
        crash(id, { timestamp: T0 + i * 1000 + 7, stackTrace: `at f${i} (a.js:1:1)`, isFatal: i === 0 }),
      );
    if (i === 3) await post('/ingest/session/end', { sessionId: id, endedAt: T0 + i * 1000 + 60_000 });
  }
});

afterAll(async () => {
  await s?.close();
});

const urls: Record<string, () => string> = {
  sessions: () => '/export/sessions',
  crashes: () => '/export/crashes',
  events: () => `/export/events?sessionId=${sid1}`,
  network: () => '/export/network',
};
const withParam = (u: string, q: string) => `${u}${u.includes('?') ? '&' : '?'}${q}`;

describe('format=parquet', () => {
  for (const k of Object.keys(urls)) {
    it(`${k}: a page and a stream read back (hyparquet) to the JSON export, with typed columns`, async () => {
      const json = (await get(urls[k]!())).json().data as Record<string, unknown>[];
      expect(json.length).toBeGreaterThan(CHUNK);
      const expected = json.map((r) => asParquetValues(r, TYPES[k]!));
      for (const q of ['format=parquet', 'format=parquet&stream=true']) {
        const r = await get(withParam(urls[k]!(), q));
        expect(r.statusCode, r.body).toBe(200);
        expect(r.headers['content-type']).toBe('application/vnd.apache.parquet');
        expect(r.headers['content-disposition']).toBe(
          `attachment; filename="${k === 'network' ? 'network' : k}.parquet"`,
        );
        const { meta, rows } = await readParquet(r.rawPayload);
        expect(rows, q).toEqual(expected);
        // A streamed file is the chunks' row groups under one footer.
        if (q.includes('stream')) expect(meta.row_groups.length).toBe(Math.ceil(json.length / CHUNK));
        const schema = Object.fromEntries(meta.schema.slice(1).map((e) => [e.name, e]));
        expect(Object.keys(schema)).toEqual(Object.keys(json[0]!));
        for (const [field, type] of Object.entries(TYPES[k]!)) {
          const e = schema[field]!;
          if (type === 'timestamp') {
            expect(e.type, field).toBe('INT64');
            expect(e.logical_type, field).toMatchObject({ type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' });
          } else {
            expect(e.type, field).toBe({ int64: 'INT64', int32: 'INT32', boolean: 'BOOLEAN' }[type]);
          }
        }
        for (const field of ['id', 'status', 'message', 'url', 'type', 'sessionId'].filter((f) => f in schema)) {
          expect(schema[field]!.logical_type ?? { type: schema[field]!.converted_type }, field).toMatchObject({
            type: expect.stringMatching(/^(STRING|UTF8)$/),
          });
        }
      }
    });
  }

  it("reads back with ClickHouse's own Parquet input too (the chDB engine)", async () => {
    if ((await s.stores()).ch.kind !== 'chdb') return; // a remote server cannot open this machine's files
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-parquet-'));
    for (const k of ['sessions', 'network']) {
      const file = path.join(dir, `${k}.parquet`);
      fs.writeFileSync(file, (await get(withParam(urls[k]!(), 'format=parquet&stream=true'))).rawPayload);
      const json = (await get(urls[k]!())).json().data as Record<string, unknown>[];
      // In file order: the engine reads a file's row groups in parallel unless told not to.
      const back = await (await s.stores()).ch.query<Record<string, unknown>>(
        `SELECT * FROM file({f:String}, Parquet) SETTINGS input_format_parquet_preserve_order = 1, max_threads = 1`,
        { f: file },
      );
      expect(back.map((r) => r.id)).toEqual(json.map((r) => r.id));
      const ts = k === 'sessions' ? 'startedAt' : 'timestamp';
      expect(back.map((r) => new Date(String(r[ts])).toISOString())).toEqual(json.map((r) => r[ts]));
    }
  });

  it('an empty stream is still one file with the schema; gzip applies; stream=true&format=json is still a 400', async () => {
    const empty = await s.createProject('empty');
    for (const k of ['sessions', 'network']) {
      const r = await s.app.inject({
        method: 'GET',
        url: withParam(urls[k]!(), 'format=parquet&stream=true'),
        headers: empty.auth,
      });
      expect(r.statusCode).toBe(200);
      const { meta, rows } = await readParquet(r.rawPayload);
      expect(rows).toEqual([]);
      expect(meta.schema.length).toBeGreaterThan(5);
    }
    const gz = await get('/export/network?format=parquet&stream=true', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect((await readParquet(gunzipSync(gz.rawPayload))).rows).toHaveLength(15); // 10 requests and 5 mirrored network events
    expect((await get('/export/sessions?format=json&stream=true')).statusCode).toBe(400);
    expect((await get('/export/sessions?format=xlsx')).statusCode).toBe(400);
  });
});
