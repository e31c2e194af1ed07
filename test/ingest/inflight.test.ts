import http from 'node:http';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import * as P from '../helpers/payloads.ts';

// Issue 24 finding 3: the bytes of /ingest bodies being received and parsed are counted before
// parsing; past INGEST_INFLIGHT_BYTES a request is answered 503 + Retry-After without its body
// being read, and the bytes are given back once each response is sent.
let s: TestServer;
let url: URL;
let auth: { authorization: string };
let sid: string;

beforeAll(async () => {
  s = await startTestServer({ INGEST_INFLIGHT_BYTES: '300000', RATE_LIMIT_INGEST_PER_MIN: '100000' });
  url = new URL(await s.app.listen({ host: '127.0.0.1', port: 0 }));
  ({ auth } = await s.createProject('inflight'));
  const start = P.sessionStart();
  expect(
    (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: start })).statusCode,
  ).toBe(201);
  sid = start.sessionId;
});
afterAll(() => s?.close());

/** An events body of about `bytes` bytes (one custom event with a long property). */
function body(seq: number, bytes: number): Buffer {
  const ev = { ...P.customEvent(sid, seq), properties: { pad: 'x'.repeat(bytes) } };
  return Buffer.from(JSON.stringify({ sessionId: sid, events: [ev] }));
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

/** A POST whose body is sent in `parts`; `hold` keeps the last part back until it resolves. */
function post(payload: Buffer, headers: Record<string, string> = {}, hold?: Promise<void>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}ingest/events`,
      {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'content-length': String(payload.length), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            retryAfter: res.headers['retry-after'] as string | undefined,
            body: text,
          }),
        );
      },
    );
    req.on('error', reject);
    if (!hold) return req.end(payload);
    req.write(payload.subarray(0, 1000));
    hold.then(() => req.end(payload.subarray(1000)));
  });
}

describe('in-flight ingest bodies are bounded in bytes before parsing', () => {
  it('a body past the bound is refused with 503 + Retry-After while another is held, and accepted once it is answered', async () => {
    let letGo!: () => void;
    const held = post(body(0, 200_000), {}, new Promise<void>((r) => (letGo = r)));
    await new Promise((r) => setTimeout(r, 200)); // its headers are in: its 200 kB are counted
    const refused = await post(body(1, 150_000));
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBe('1');
    expect(JSON.parse(refused.body)).toEqual({ error: expect.any(String), code: 'unavailable' });

    // gzip: its inflated size is not known up front; it is counted as it inflates
    const gz = zlib.gzipSync(body(2, 150_000));
    const refusedGz = await post(gz, { 'content-encoding': 'gzip' });
    expect(refusedGz.status).toBe(503);
    expect(refusedGz.retryAfter).toBe('1');

    // small bodies still fit beside the held one
    expect((await post(body(3, 1000))).status).toBe(201);

    letGo();
    expect((await held).status).toBe(201);
    // every byte was given back: both larger bodies now fit
    expect((await post(body(1, 150_000))).status).toBe(201);
    expect((await post(gz, { 'content-encoding': 'gzip' })).status).toBe(201);
  });
});
