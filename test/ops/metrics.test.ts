import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logCapture, startTestServer, tempDataDir, type TestServer } from '../helpers/server.ts';
import * as P from '../helpers/payloads.ts';
import { metricValue } from '../helpers/inspect.ts';

// /metrics (Prometheus text) and the health split, over the real HTTP stack and stores.

const { lines: logLines, stream: sink } = logCapture();

let s: TestServer;
// The outbox gauges count the whole database: on a shared Postgres this file gets its own.
beforeAll(async () => {
  s = await startTestServer(
    { RATE_LIMIT_EXPORT_PER_MIN: '2', LOG_LEVEL: 'info', LOG_REQUESTS: 'true' },
    tempDataDir(),
    { logger: { stream: sink } },
  );
});
afterAll(async () => {
  await s?.close();
});

describe('metrics and health', () => {
  it('counts requests and rows by route and status, inserts, the queue, streams, rate-limit rejections and the outbox', async () => {
    const p = await s.createProject();
    const start = P.sessionStart();
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: start })).statusCode,
    ).toBe(201);
    const events = {
      sessionId: start.sessionId,
      events: [P.navigate(start.sessionId, 0), P.tapEvent(start.sessionId, 1), P.customEvent(start.sessionId, 2)],
    };
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/events', headers: p.auth, payload: events })).statusCode,
    ).toBe(201);
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/crash', headers: p.auth, payload: P.crash(start.sessionId) }))
        .statusCode,
    ).toBe(201);
    const stream = await s.app.inject({
      method: 'GET',
      url: '/export/sessions?stream=true&format=ndjson',
      headers: p.auth,
    });
    expect(stream.statusCode).toBe(200);
    await s.app.inject({ method: 'GET', url: '/export/sessions', headers: p.auth });
    expect((await s.app.inject({ method: 'GET', url: '/export/sessions', headers: p.auth })).statusCode).toBe(429);

    const r = await s.app.inject({ method: 'GET', url: '/metrics' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = r.body;
    expect(metricValue(m, 'flightrec_http_requests_total{method="POST",route="/ingest/events",status="201"}')).toBe(1);
    expect(metricValue(m, 'flightrec_ingest_rows_total{route="/ingest/events",status="201"}')).toBe(3);
    expect(metricValue(m, 'flightrec_ingest_rows_total{route="/ingest/crash",status="201"}')).toBe(1);
    expect(metricValue(m, 'flightrec_http_requests_total{method="GET",route="/export/sessions",status="429"}')).toBe(1);
    expect(metricValue(m, 'flightrec_rate_limit_rejections_total{limiter="export"}')).toBe(1);
    expect(metricValue(m, 'flightrec_export_streams_total{outcome="completed"}')).toBe(1);
    expect(metricValue(m, 'flightrec_export_streams_open')).toBe(0);
    expect(metricValue(m, 'flightrec_clickhouse_insert_rows_total{table="ingest",outcome="ok"}')).toBe(3);
    expect(metricValue(m, 'flightrec_clickhouse_insert_rows_total{table="crash_occurrences",outcome="ok"}')).toBe(1);
    expect(metricValue(m, 'flightrec_clickhouse_insert_duration_seconds_count{table="ingest",outcome="ok"}')).toBe(1);
    expect(metricValue(m, 'flightrec_ingest_queue_rows{table="ingest"}')).toBe(0);
    expect(metricValue(m, 'flightrec_ingest_queue_bytes')).toBe(0);
    // the new crash group's alert job waits (RUN_WORKER=false in tests)
    expect(metricValue(m, 'flightrec_outbox_jobs{state="pending"}')).toBe(1);
    expect(metricValue(m, 'flightrec_outbox_jobs{state="failed"}')).toBe(0);
    expect(m).toMatch(/^flightrec_process_cpu_seconds_total /m);
  });

  it('splits liveness from readiness, keeps /health as readiness, and logs none of them per request, even with LOG_REQUESTS', async () => {
    logLines.length = 0;
    for (const url of ['/health', '/health/ready', '/health/live']) {
      const r = await s.app.inject({ method: 'GET', url });
      expect(r.statusCode, url).toBe(200);
      expect(r.json()).toEqual({ status: 'ok' });
    }
    await s.app.inject({ method: 'GET', url: '/metrics' });
    await s.app.inject({ method: 'GET', url: '/openapi.json' });
    const logged = logLines.join('');
    expect(logged).toContain('/openapi.json');
    expect(logged).not.toMatch(/\/health|\/metrics/);
  });
});
