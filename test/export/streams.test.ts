import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { networkRequest, sessionStart } from '../helpers/payloads.ts';
import { waitFor } from '../helpers/wait.ts';

// Finding 6 of the security probe: streamed exports are capped per project, and a client that
// reads nothing is cut off (the timeout is 60 s by default; 1 s here).
let s: TestServer;
let p: Awaited<ReturnType<TestServer['createProject']>>;
let port: number;
const IDLE_MS = 1000;

beforeAll(async () => {
  s = await startTestServer({
    EXPORT_MAX_STREAMS: '2',
    EXPORT_IDLE_TIMEOUT_MS: String(IDLE_MS),
    EXPORT_CHUNK_ROWS: '20',
    RATE_LIMIT_EXPORT_PER_MIN: '1000',
  });
  await s.app.listen({ host: '127.0.0.1', port: 0 });
  port = (s.app.server.address() as net.AddressInfo).port;
  p = await s.createProject();
  const st = sessionStart();
  await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st });
  // ~8 MB of CSV: more than the sockets' buffers hold for a client that does not read.
  for (let b = 0; b < 5; b++) {
    const requests = Array.from({ length: 200 }, (_, i) =>
      networkRequest({
        url: `https://api.example.com/${b}/${i}/${'x'.repeat(8000)}`,
        timestamp: 1_767_225_600_000 + b * 1000 + i,
      }),
    );
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/network',
      headers: p.auth,
      payload: { sessionId: st.sessionId, requests },
    });
    expect(r.statusCode).toBe(201);
  }
  // The stalled clients below read over TCP: what they stream must be loaded first.
  await s.settled();
});
afterAll(async () => {
  await s?.close();
});

/** A client that asks for a stream and never reads a byte of the answer. */
function stalledClient(): net.Socket {
  const sock = net.connect(port, '127.0.0.1');
  sock.write(
    `GET /export/network?stream=true&format=csv HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${p.auth.authorization}\r\n\r\n`,
  );
  sock.pause();
  sock.on('error', () => {});
  return sock;
}

describe('streamed exports', () => {
  it('beyond EXPORT_MAX_STREAMS per project: 429 with Retry-After; a stalled client is cut and its slot freed', async () => {
    const clients = [stalledClient(), stalledClient()];
    try {
      await waitFor('two open streams', () => s.svc.exportStreams.openFor(p.projectId) === 2);
      const third = await s.app.inject({
        method: 'GET',
        url: '/export/network?stream=true&format=csv',
        headers: p.auth,
      });
      expect(third.statusCode).toBe(429);
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      // Pages are not streams: still served.
      expect((await s.app.inject({ method: 'GET', url: '/export/network?limit=1', headers: p.auth })).statusCode).toBe(
        200,
      );
      // Another project has its own streams.
      const other = await s.createProject();
      expect(
        (await s.app.inject({ method: 'GET', url: '/export/network?stream=true&format=csv', headers: other.auth }))
          .statusCode,
      ).toBe(200);

      // Cut after IDLE_MS of not reading; the default (60 s) would not be within this deadline.
      await waitFor('the stalled streams to be cut', () => s.svc.exportStreams.openFor(p.projectId) === 0, 20_000);
      const after = await s.app.inject({
        method: 'GET',
        url: '/export/network?stream=true&format=csv',
        headers: p.auth,
      });
      expect(after.statusCode).toBe(200);
      expect(after.body.split('\r\n').length).toBeGreaterThan(1000);
    } finally {
      for (const c of clients) c.destroy();
    }
  });

  it('a client that reads to the end gives its slot back', async () => {
    for (let i = 0; i < 4; i++) {
      const r = await s.app.inject({
        method: 'GET',
        url: '/export/network?stream=true&format=ndjson',
        headers: p.auth,
      });
      expect(r.statusCode).toBe(200);
    }
    expect(s.svc.exportStreams.openFor(p.projectId)).toBe(0);
  });
});
