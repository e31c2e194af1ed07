import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  MAX_RETRY_AFTER_MS,
  Transport,
  chunk,
  classifyStatus,
  eventBatches,
  networkBatches,
  parseRetryAfter,
  retryDelay,
  type NetworkRequest,
  type SdkEvent,
} from '../src/index.ts';
import { realPause, startFaultServer, type FaultServer } from './helpers/faultServer.ts';
import { fakeClock, retryLog, settle } from './helpers/drive.ts';

const BODY = JSON.stringify({
  sessionId: '6f1c1c1e-1b1a-4c1a-9a1a-1a1a1a1a1a1a',
  events: [{ type: 'custom', name: 'é ✓', sequenceNumber: 0 }],
});
const PATH = '/ingest/events';

let srv: FaultServer;
beforeEach(async () => {
  srv = await startFaultServer();
  fakeClock();
});
afterEach(async () => {
  vi.useRealTimers();
  await srv.close();
});

function transport(onRetry: ReturnType<typeof retryLog>['onRetry']) {
  return new Transport({ endpoint: `${srv.url}/`, apiKey: 'frk_test', onRetry, timeoutMs: 0 });
}

/** Gaps between consecutive arrivals, in (fake) ms. */
const gaps = (at: number[]) => at.slice(1).map((t, i) => t - at[i]!);

describe('Transport retries (fault server, fake timers)', () => {
  it('retries 500s three times waiting 2 s, 4 s, 8 s, sending the identical body each time', async () => {
    srv.script(PATH, { status: 500 }, { status: 502 }, { status: 503 });
    const { log, onRetry } = retryLog();
    const r = await settle(transport(onRetry).send(PATH, BODY), log);
    expect(r).toMatchObject({ outcome: 'sent', status: 201, attempts: 4 });
    const got = srv.on(PATH);
    expect(gaps(got.map((g) => g.at))).toEqual([2000, 4000, 8000]);
    expect(new Set(got.map((g) => g.body))).toEqual(new Set([BODY]));
    for (const g of got) {
      expect(g.method).toBe('POST');
      expect(g.headers.authorization).toBe('Bearer frk_test');
      expect(g.headers['content-type']).toBe('application/json');
    }
  });

  it('gives up after the third retry and reports the last status', async () => {
    srv.always(PATH, { status: 503 });
    const { log, onRetry } = retryLog();
    const r = await settle(transport(onRetry).send(PATH, BODY), log);
    expect(r).toMatchObject({ outcome: 'failed', status: 503, attempts: 4 });
    await vi.advanceTimersByTimeAsync(120_000);
    await realPause();
    expect(srv.on(PATH)).toHaveLength(4);
    expect(log.map((l) => l.delayMs)).toEqual([2000, 4000, 8000]);
  });

  it('honours Retry-After when it is longer than the schedule, and the schedule when it is shorter', async () => {
    srv.script(
      PATH,
      { status: 429, headers: { 'retry-after': '5' } },
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 503, headers: { 'retry-after': new Date(Date.now() + 40_000).toUTCString() } },
    );
    const { log, onRetry } = retryLog();
    const r = await settle(transport(onRetry).send(PATH, BODY), log);
    expect(r.outcome).toBe('sent');
    // 5 s (> 2 s), then 4 s (> 1 s), then the HTTP date: 40 s after the first request, 9 s of which have passed.
    expect(gaps(srv.on(PATH).map((g) => g.at))).toEqual([5000, 4000, 31_000]);
  });

  it('caps Retry-After at the contract backoff cap of 60 s', async () => {
    srv.script(PATH, { status: 429, headers: { 'retry-after': '3600' } });
    const { log, onRetry } = retryLog();
    await settle(transport(onRetry).send(PATH, BODY), log);
    expect(gaps(srv.on(PATH).map((g) => g.at))).toEqual([MAX_RETRY_AFTER_MS]);
  });

  it.each([400, 401, 404, 413, 422])('does not retry %i and returns the service error', async (status) => {
    srv.script(PATH, { status, body: { error: 'Session not found' } });
    const { log, onRetry } = retryLog();
    const r = await settle(transport(onRetry).send(PATH, BODY), log);
    expect(r).toEqual({
      outcome: 'rejected',
      status,
      attempts: 1,
      error: `${status} Session not found`,
      body: '{"error":"Session not found"}',
    });
    await vi.advanceTimersByTimeAsync(30_000);
    await realPause();
    expect(srv.on(PATH)).toHaveLength(1);
    expect(log).toEqual([]);
  });

  it('retries connection failures like 5xx', async () => {
    srv.script(PATH, 'reset', 'reset');
    const { log, onRetry } = retryLog();
    const r = await settle(transport(onRetry).send(PATH, BODY), log);
    expect(r).toMatchObject({ outcome: 'sent', attempts: 3 });
    expect(log.map((l) => [l.delayMs, l.status])).toEqual([
      [2000, undefined],
      [4000, undefined],
    ]);
    expect(new Set(srv.on(PATH).map((g) => g.body))).toEqual(new Set([BODY]));
  });

  it('stops waiting when aborted', async () => {
    srv.always(PATH, { status: 500 });
    const { log, onRetry } = retryLog();
    const ctrl = new AbortController();
    const p = transport(onRetry).send(PATH, BODY, ctrl.signal);
    await srv.waitFor(1, PATH);
    await vi.waitFor(() => expect(log).toHaveLength(1));
    ctrl.abort();
    expect(await p).toEqual({ outcome: 'aborted', attempts: 1 });
  });
});

describe('pure helpers', () => {
  it('classifies statuses as the contract says', () => {
    expect([200, 201, 204].map(classifyStatus)).toEqual(['ok', 'ok', 'ok']);
    expect([429, 500, 503, 599].map(classifyStatus)).toEqual(['retry', 'retry', 'retry', 'retry']);
    expect([400, 401, 404, 408, 413, 422, 301].map(classifyStatus)).toEqual(Array(7).fill('reject'));
  });

  it('reads Retry-After as seconds or a date', () => {
    expect(parseRetryAfter('7')).toBe(7000);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', Date.UTC(2026, 0, 1))).toBe(30_000);
    expect(retryDelay(2000, 500)).toBe(2000);
    expect(retryDelay(2000, 9000)).toBe(9000);
    expect(retryDelay(8000, undefined)).toBe(8000);
  });

  it('splits larger buffers into contract-sized batches, in order', () => {
    expect(chunk([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    const sid = '6f1c1c1e-1b1a-4c1a-9a1a-1a1a1a1a1a1a';
    const events = Array.from(
      { length: 1201 },
      (_, i): SdkEvent => ({ type: 'tap', sessionId: sid, timestamp: 1, sequenceNumber: i, x: 1, y: 2 }),
    );
    const eb = eventBatches(sid, events, 10_000);
    expect(eb.map((b) => b.items)).toEqual([500, 500, 201]);
    expect(
      eb.flatMap((b) => (JSON.parse(b.body) as { events: SdkEvent[] }).events.map((e) => e.sequenceNumber)),
    ).toEqual(events.map((e) => e.sequenceNumber));
    const reqs = Array.from(
      { length: 401 },
      (_, i): NetworkRequest => ({ id: String(i), method: 'GET', url: 'u', duration: 1, timestamp: 1 }),
    );
    expect(networkBatches(sid, reqs).map((b) => [b.items, b.path])).toEqual([
      [200, '/ingest/network'],
      [200, '/ingest/network'],
      [1, '/ingest/network'],
    ]);
  });
});
