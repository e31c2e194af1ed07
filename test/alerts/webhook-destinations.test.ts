import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { deliveryFailure, postJson } from '../../src/workers/webhookJob.ts';
import { webhookUrlProblem } from '../../src/domain/webhooks.ts';

// Webhooks made by tenants cannot reach inside the operator's network by default (the fourth
// probe reached 127.0.0.1, read the answer in the delivery log, and scanned ports by the errors).

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
}, 60_000);
afterAll(async () => {
  await s?.close();
});

const inside = [
  'http://127.0.0.1:8080/internal',
  'http://[::1]/x',
  'http://2130706433/x',
  'http://0x7f.1/x',
  'http://localhost:5432/',
  'http://api.localhost/x',
  'http://[::ffff:127.0.0.1]/x',
  'http://0.0.0.0/x',
  'http://169.254.169.254/latest/meta-data/',
  'http://10.1.2.3/x',
  'http://192.168.1.1/x',
  'http://[fd00::1]/x',
];

describe('webhook destinations', () => {
  it('private destinations are refused by default, in every spelling, with the contract error shape', async () => {
    expect(s.svc.config.webhooks.allowPrivate).toBe(false);
    const p = await s.createProject('Inside');
    for (const url of inside) {
      const r = await s.app.inject({
        method: 'POST',
        url: `/api/projects/${p.projectId}/webhooks`,
        headers: s.admin,
        payload: { url },
      });
      expect(r.statusCode, url).toBe(422);
      expect(r.json()).toMatchObject({ error: expect.any(String), details: [{ path: '/url' }] });
    }
    const listed = await s.app.inject({
      method: 'GET',
      url: `/api/projects/${p.projectId}/webhooks`,
      headers: s.admin,
    });
    expect(listed.json().items).toEqual([]);
    await s.createWebhook(p.projectId, { url: 'https://hooks.example.com/flightrec' });
  });

  it('an operator who allows private destinations can still use them', () => {
    for (const url of inside) expect(webhookUrlProblem(url, true)).toBeNull();
  });

  it('a name that resolves inside is refused when it is connected to', async () => {
    await expect(postJson('http://localhost:9/x', '{}', {}, { timeoutMs: 2000, allowPrivate: false })).rejects.toThrow(
      /private address/,
    );
  });

  it("the log names a failure's kind, not the socket's words (which tell an open port from a closed one)", () => {
    expect(deliveryFailure(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBe(
      'connection failed',
    );
    expect(
      deliveryFailure(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5432'), { code: 'ECONNREFUSED' })),
    ).toBe('connection failed');
    expect(deliveryFailure(new Error('timed out after 10000 ms'))).toBe('timed out');
    expect(
      deliveryFailure(Object.assign(new Error('x resolves to a private address (10.0.0.1)'), { code: 'EPRIVATE' })),
    ).toBe('refused: private or loopback destination');
  });
});
