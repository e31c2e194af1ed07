import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// Finding 2 of the third probe: 100–200 concurrent `POST /nope` with 5 MB JSON bodies were
// buffered and parsed before the 404 (+0.5–0.75 GB RSS). An unknown route, or a request
// without valid credentials, must be answered before its body is read. Each request here
// announces 5 MB, sends 1 KiB and waits: the answer has to come while the body is unsent.
let s: TestServer;
let port = 0;
beforeAll(async () => {
  s = await startTestServer();
  await s.app.listen({ host: '127.0.0.1', port: 0 });
  const a = s.app.server.address();
  port = typeof a === 'object' && a ? a.port : 0;
});
afterAll(async () => {
  await s?.close();
});

/** Sends the head and the first KiB of a 5 MB body, then waits (sending nothing more) for the answer. */
function partialPost(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; head: string; body: string; sentBytes: number }> {
  const announced = 5 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no answer to ${path} while the body was incomplete`));
    }, 5000);
    sock.on('error', reject);
    sock.on('data', (d) => {
      got += d.toString('utf8');
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = got.slice(0, end);
      const len = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (got.length - end - 4 < len) return;
      clearTimeout(timer);
      sock.destroy();
      resolve({
        status: Number(head.split(' ')[1]),
        head: head.toLowerCase(),
        body: got.slice(end + 4, end + 4 + len),
        sentBytes: 1024,
      });
    });
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    sock.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${announced}\r\n${extra}\r\n`,
    );
    sock.write(`{"sessionId":"${'x'.repeat(1000)}`);
  });
}

describe('answers before the body is read', () => {
  it('a route that does not exist: 404 {error} at once, and the connection is closed', async () => {
    const r = await partialPost('/nope');
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body)).toEqual({ error: 'Route POST /nope not found', code: 'not_found' });
    expect(r.head).toContain('connection: close');
  });

  it('many at once: every one answered while its body is unsent', async () => {
    const all = await Promise.all(Array.from({ length: 50 }, (_, i) => partialPost(`/nope/${i}`)));
    expect(all.map((r) => r.status)).toEqual(Array(50).fill(404));
  });

  it('no credentials, or wrong ones: 401 before the body, on ingest, export and the management API', async () => {
    for (const [path, headers] of [
      ['/ingest/events', {}],
      ['/ingest/events', { authorization: 'Bearer frk_not-a-valid-key' }],
      ['/ingest/crash', { authorization: `Bearer frk_${'A'.repeat(38)}` }],
      ['/api/projects', {}],
      ['/api/projects', { authorization: 'Bearer wrong-admin-token-0123456789' }],
      ['/api/dashboard/projects', {}],
    ] as const) {
      const r = await partialPost(path, headers);
      expect(r.status, path).toBe(401);
      expect(JSON.parse(r.body).error, path).toEqual(expect.any(String));
    }
  });

  it('a known route still reads its body (the control: no answer while it is incomplete)', async () => {
    const p = await s.createProject('early');
    await expect(partialPost('/ingest/events', p.auth)).rejects.toThrow(/no answer/);
  });

  it('the routes anyone may call (sign-up, log-in, email links) refuse a big body with 413 before reading it', async () => {
    for (const path of ['/api/auth/login', '/api/auth/signup', '/api/auth/verify', '/api/alert-recipients/confirm']) {
      const r = await partialPost(path);
      expect(r.status, path).toBe(413);
      expect(JSON.parse(r.body).error, path).toEqual(expect.any(String));
    }
  });
});
