import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logCapture, startTestServer, tempDataDir, type TestServer } from '../helpers/server.ts';
import { sessionStart } from '../helpers/payloads.ts';
import { metricValue } from '../helpers/inspect.ts';

describe('ingestion rate limit (in-process, or Redis when REDIS_URL is set)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ RATE_LIMIT_INGEST_PER_MIN: '5' });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('counts per key, sends RateLimit-* headers, and answers 429 with Retry-After past the limit', async () => {
    const a = await s.createProject('a');
    const b = await s.createProject('b');
    const send = (auth: { authorization: string }) =>
      s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: sessionStart() });
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await send(a.auth);
      expect(r.statusCode).toBe(201);
      expect(r.headers['ratelimit-limit']).toBe('5');
      remaining.push(Number(r.headers['ratelimit-remaining']));
      expect(Number(r.headers['ratelimit-reset'])).toBeGreaterThan(0);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const limited = await send(a.auth);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ error: expect.any(String), code: 'rate_limited' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // another project's key has its own budget
    expect((await send(b.auth)).statusCode).toBe(201);
  });
});

describe('Redis unreachable', () => {
  let s: TestServer;
  const log = logCapture();
  beforeAll(async () => {
    // Nothing listens on port 1: every Redis command fails at once.
    s = await startTestServer(
      { REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_INGEST_PER_MIN: '3', LOG_LEVEL: 'warn' },
      tempDataDir(),
      { logger: { stream: log.stream } },
    );
  });
  afterAll(async () => {
    await s?.close();
  });

  it('keeps ingesting with in-process limits instead of failing, and counts each request it could not share', async () => {
    const a = await s.createProject();
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await s.app.inject({
        method: 'POST',
        url: '/ingest/session',
        headers: a.auth,
        payload: sessionStart(),
      });
      codes.push(r.statusCode);
      expect(r.headers['ratelimit-limit']).toBe('3');
    }
    expect(codes).toEqual([201, 201, 201, 429]);
    const metrics = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metricValue(metrics, 'flightrec_rate_limit_redis_fallbacks_total{limiter="ingest"}')).toBe(4);
    expect(metricValue(metrics, 'flightrec_rate_limit_rejections_total{limiter="ingest"}')).toBe(1);
    // one warning a minute, not one a request
    expect(log.lines.filter((l) => l.includes('Redis did not answer the rate limiter'))).toHaveLength(1);
  });
});
