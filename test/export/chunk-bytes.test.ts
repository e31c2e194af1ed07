import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { crash, customEvent, sessionStart } from '../helpers/payloads.ts';
import type { Encoding } from '../../src/repos/exportCore/types.ts';
import type { ExportEndpoint } from '../../src/services/exports.ts';

// Finding 3 of the third probe: a stream of wide rows (20 KB fields) took RSS from 1.6 to
// 2.9 GB, because a chunk was 20,000 rows whatever their width. A chunk now also ends once its
// rows reach EXPORT_CHUNK_BYTES (here 256 KiB): the chunks the export service hands to the
// response are read here one by one and measured.
const CHUNK_BYTES = 256 * 1024;
const WIDE = 20_000;
let s: TestServer;
let p: Awaited<ReturnType<TestServer['createProject']>>;
let sessionId = '';

beforeAll(async () => {
  s = await startTestServer({ EXPORT_CHUNK_BYTES: String(CHUNK_BYTES), RATE_LIMIT_EXPORT_PER_MIN: '1000' });
  p = await s.createProject();
  const st = sessionStart();
  sessionId = st.sessionId;
  expect(
    (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st })).statusCode,
  ).toBe(201);
  // 200 events with a 20 KB property each (~4 MB), in four requests.
  for (let b = 0; b < 4; b++) {
    const events = Array.from({ length: 50 }, (_, i) => {
      const seq = b * 50 + i;
      return { ...customEvent(sessionId, seq), properties: { blob: `${seq}:${'x'.repeat(WIDE)}` } };
    });
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/events',
      headers: p.auth,
      payload: { sessionId, events },
    });
    expect(r.statusCode).toBe(201);
  }
  // 60 crash groups whose messages are 8 KB (the widest crash field), in Postgres.
  for (let i = 0; i < 60; i++) {
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/crash',
      headers: p.auth,
      payload: crash(sessionId, { message: `${i}:${'m'.repeat(8000)}`, stackTrace: `at ${randomUUID()} (a.js:1:1)` }),
    });
    expect(r.statusCode).toBe(201);
  }
  // The tests stream through the service directly, not inject: what was acknowledged is loaded first.
  await s.settled();
});
afterAll(async () => {
  await s?.close();
});

async function chunkSizes<F>(ep: ExportEndpoint<F>, filter: F, enc: Encoding) {
  const out = await s.svc.exports.stream(ep, p.projectId, filter, enc);
  const sizes: number[] = [];
  let text = '';
  for await (const c of out.chunks) {
    sizes.push(Buffer.byteLength(c));
    text += c.toString();
  }
  return { sizes, text };
}

describe('streamed exports are chunked by bytes', () => {
  it('wide ClickHouse rows: NDJSON and CSV chunks stay near EXPORT_CHUNK_BYTES, and every row arrives once', async () => {
    const ep = s.svc.exports.endpoints.events;
    for (const enc of ['ndjson', 'csv'] as const) {
      const { sizes, text } = await chunkSizes(ep, { sessionId }, enc);
      // 200 rows of ~20 KB: at least a dozen chunks (one chunk of 20,000 rows before), none
      // bigger than the bound plus the row that crosses it and the encoding's own overhead.
      expect(sizes.length, enc).toBeGreaterThanOrEqual(12);
      for (const n of sizes) expect(n, enc).toBeLessThanOrEqual(CHUNK_BYTES * 1.25 + 2 * WIDE);
      const seqs = [...text.matchAll(/(\d+):x{20000}/g)].map((m) => Number(m[1]));
      expect(seqs, enc).toEqual(Array.from({ length: 200 }, (_, i) => i));
    }
  });

  it('wide Postgres rows (crash groups): chunks bounded by bytes as well', async () => {
    const { sizes, text } = await chunkSizes(s.svc.exports.endpoints.crashes, {}, 'ndjson');
    expect(sizes.length).toBeGreaterThanOrEqual(2);
    for (const n of sizes) expect(n).toBeLessThanOrEqual(CHUNK_BYTES * 1.25 + 2 * 8000);
    expect(text.trim().split('\n')).toHaveLength(60);
  });

  it('over HTTP the stream is whole', async () => {
    const r = await s.app.inject({
      method: 'GET',
      url: `/export/events?sessionId=${sessionId}&stream=true&format=ndjson`,
      headers: p.auth,
    });
    expect(r.statusCode).toBe(200);
    expect(r.body.trim().split('\n')).toHaveLength(200);
  });
});
