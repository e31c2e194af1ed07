import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.ts';
import { T0, networkRequest, sessionStart } from '../helpers/payloads.ts';
import { waitFor } from '../helpers/wait.ts';

const LIMIT = 5;
const logs: string[] = [];
let s: TestServer;
let base: string;

beforeAll(async () => {
  s = await startTestServer({ RATE_LIMIT_EXPORT_PER_MIN: String(LIMIT), EXPORT_CHUNK_ROWS: '200' }, tempDataDir(), {
    logger: { level: 'error', stream: { write: (line: string) => logs.push(line) } },
  });
  base = await s.listen();
});

afterAll(async () => {
  await s?.close();
});

describe('export rate limit', () => {
  it(`allows ${LIMIT} requests a minute per key (a whole stream is one), then 429 with Retry-After`, async () => {
    const p = await s.createProject('limited');
    const other = await s.createProject('other');
    const get = (auth: Record<string, string>, url: string) => s.app.inject({ method: 'GET', url, headers: auth });
    for (let i = 0; i < LIMIT; i++) {
      const r = await get(p.auth, i === 0 ? '/export/network?stream=true' : '/export/sessions');
      expect(r.statusCode).toBe(200);
      expect(r.headers['ratelimit-limit']).toBe(String(LIMIT));
      expect(r.headers['ratelimit-remaining']).toBe(String(LIMIT - 1 - i));
      expect(Number(r.headers['ratelimit-reset'])).toBeGreaterThan(0);
    }
    const over = await get(p.auth, '/export/crashes');
    expect(over.statusCode).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect(over.json().error).toMatch(/rate limit/i);
    // per key: another project's key still has its own budget; ingestion is a separate limit
    expect((await get(other.auth, '/export/crashes')).statusCode).toBe(200);
    const x = sessionStart();
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: x })).statusCode,
    ).toBe(201);
  });
});

describe('a failure in the middle of a stream', () => {
  it('aborts the response instead of ending it, and logs the failure', async () => {
    const p = await s.createProject('abort');
    const x = sessionStart();
    await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: x });
    // ~12 MB of CSV: far more than the socket buffers hold, so the server is still producing
    // chunks (200 rows each) when the table disappears under it.
    const long = `https://api.example.com/${'x'.repeat(4000)}`;
    for (let b = 0; b < 15; b++) {
      const requests = Array.from({ length: 200 }, (_, i) =>
        networkRequest({ id: randomUUID(), url: long, timestamp: T0 + b * 1000 + i }),
      );
      const r = await s.app.inject({
        method: 'POST',
        url: '/ingest/network',
        headers: p.auth,
        payload: { sessionId: x.sessionId, requests },
      });
      expect(r.statusCode).toBe(201);
    }
    await s.settled(); // the export below reads over the socket, not inject
    const ch = s.svc.stores.ch;
    const outcome = await new Promise<{
      status: number;
      bytes: number;
      complete: boolean;
      ended: boolean;
      error?: string;
    }>((resolve) => {
      const req = http.get(`${base}/export/network?stream=true&format=csv`, { headers: p.auth }, (res) => {
        let bytes = 0;
        let ended = false;
        res.once('data', (c: Buffer) => {
          bytes += c.length;
          res.pause();
          ch.exec('RENAME TABLE network_logs TO network_logs_away').then(() => {
            res.on('data', (d: Buffer) => (bytes += d.length));
            res.resume();
          });
        });
        res.on('end', () => (ended = true));
        res.on('error', () => {});
        res.on('close', () => resolve({ status: res.statusCode ?? 0, bytes, complete: res.complete, ended }));
      });
      req.on('error', (err) => resolve({ status: 0, bytes: 0, complete: false, ended: false, error: String(err) }));
    });
    await ch.exec('RENAME TABLE network_logs_away TO network_logs');

    expect(outcome.status).toBe(200);
    expect(outcome.bytes).toBeGreaterThan(0);
    expect(outcome.bytes).toBeLessThan(3000 * 4000);
    expect(outcome.complete).toBe(false);
    expect(outcome.ended).toBe(false);
    await waitFor('the cut logged', () => logs.some((l) => l.includes('export stream failed mid-response')));

    // the same export, with the table back, is whole (the spool's loads that failed while the
    // table was away are retried)
    await s.settled();
    const whole = await fetch(`${base}/export/network?stream=true&format=csv`, { headers: p.auth });
    const text = await whole.text();
    expect(text.split('\r\n').filter(Boolean)).toHaveLength(1 + 3000);
  });

  it('a store failure before the first byte is a clean JSON 500', async () => {
    const p = await s.createProject('early-failure');
    const ch = s.svc.stores.ch;
    await ch.exec('RENAME TABLE network_logs TO network_logs_away');
    try {
      // Parquet too: its stream sends no byte (not even the leading magic) before the first chunk is read.
      for (const format of ['csv', 'parquet']) {
        const r = await s.app.inject({
          method: 'GET',
          url: `/export/network?stream=true&format=${format}`,
          headers: p.auth,
        });
        expect(r.statusCode, format).toBe(500);
        expect(r.headers['content-type']).toMatch(/application\/json/);
        expect(r.json()).toEqual({ error: 'Internal server error', code: 'internal_error' });
      }
    } finally {
      await ch.exec('RENAME TABLE network_logs_away TO network_logs');
    }
  });
});

describe('OpenAPI', () => {
  it('/openapi.json lists the ingestion, export and management paths with their schemas', async () => {
    const r = await s.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(r.statusCode).toBe(200);
    const doc = r.json();
    const paths = Object.keys(doc.paths);
    for (const p of [
      '/ingest/session',
      '/ingest/session/end',
      '/ingest/events',
      '/ingest/crash',
      '/ingest/network',
      '/export/sessions',
      '/export/crashes',
      '/export/events',
      '/export/network',
      '/api/projects',
      '/api/keys/{keyId}/deactivate',
    ]) {
      expect(paths, p).toContain(p);
    }
    const events = doc.paths['/export/events'].get;
    const params = Object.fromEntries(
      events.parameters.map((x: { name: string; required?: boolean }) => [x.name, x.required]),
    );
    expect(params).toMatchObject({ sessionId: true, page: false, limit: false, format: false, stream: false });
    const content = events.responses['200'].content;
    expect(Object.keys(content)).toEqual([
      'application/json',
      'text/csv',
      'application/x-ndjson',
      'application/vnd.apache.parquet',
    ]);
    expect(Object.keys(content['application/json'].schema.properties)).toEqual([
      'data',
      'total',
      'page',
      'limit',
      'pages',
      'nextCursor',
    ]);
    expect(events.parameters.find((x: { name: string }) => x.name === 'format').schema.enum).toEqual([
      'json',
      'csv',
      'ndjson',
      'parquet',
    ]);
    // the incremental parameters, on the two resources that change after export
    for (const path of ['/export/sessions', '/export/crashes']) {
      const names = doc.paths[path].get.parameters.map((x: { name: string }) => x.name);
      expect(names, path).toEqual(expect.arrayContaining(['updatedSince', 'cursor']));
      expect(doc.paths[path].get.responses['200'].headers, path).toHaveProperty('X-Next-Cursor');
    }
    const sessionFields = Object.keys(
      doc.paths['/export/sessions'].get.responses['200'].content['application/json'].schema.properties.data.items
        .properties,
    );
    expect(sessionFields).toEqual([
      'id',
      'userId',
      'status',
      'platform',
      'osVersion',
      'appVersion',
      'networkType',
      'eventCount',
      'hasCrash',
      'hasNetworkErrors',
      'duration',
      'startedAt',
      'endedAt',
      'updatedAt',
    ]);
    const docs = await s.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
  });
});
