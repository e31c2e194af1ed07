import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ RATE_LIMIT_AUTH_PER_MIN: '5' });
});
afterAll(async () => {
  await s?.close();
});

// A fresh address per run: with REDIS_URL the counters outlive the process.
const ip = () =>
  `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

describe('/api/auth rate limit per IP', () => {
  it('lets 5 requests through, answers the 6th with 429 and Retry-After; another IP is unaffected', async () => {
    const a = ip();
    const b = ip();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await s.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: a,
        payload: { email: 'nobody@example.com', password: 'wrong password' },
      });
      statuses.push(r.statusCode);
      expect(r.headers['ratelimit-limit']).toBe('5');
      expect(r.headers['ratelimit-remaining']).toBe(String(Math.max(0, 4 - i)));
      if (r.statusCode === 429) {
        expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
        expect(r.json().error).toMatch(/Rate limit/);
      }
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    // all of /api/auth shares the budget
    const me = await s.app.inject({ method: 'GET', url: '/api/auth/me', remoteAddress: a });
    expect(me.statusCode).toBe(429);
    const other = await s.app.inject({ method: 'GET', url: '/api/auth/me', remoteAddress: b });
    expect(other.statusCode).toBe(401);
    // the dashboard and ingestion are not under this limit
    const dash = await s.app.inject({ method: 'GET', url: '/api/dashboard/projects', remoteAddress: a });
    expect(dash.statusCode).toBe(401);
  });
});
