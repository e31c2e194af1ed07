import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import * as P from '../helpers/payloads.ts';
import { clickHouseAway } from '../helpers/insertFaults.ts';

// Readiness with ClickHouse away: the replica stays in its balancer while its spools take what
// it acknowledges, and leaves it once one of them is full, whichever (here the crash reports').

let s: TestServer;
beforeAll(async () => {
  // The smallest spools (1 MiB each); reads must not wait for spools that cannot load.
  s = await startTestServer(
    { SPOOL_MAX_BYTES: String(1024 * 1024), RATE_LIMIT_INGEST_PER_MIN: '1000000' },
    undefined,
    undefined,
    { readAfterSettled: false },
  );
});
afterAll(async () => {
  await s?.app.close();
});

describe('/health/ready with ClickHouse away', () => {
  it('stays ready while the spools have room, and is not once the crash spool is full', async () => {
    const { auth } = await s.createProject('readiness');
    const post = (url: string, payload: object) => s.app.inject({ method: 'POST', url, headers: auth, payload });
    const start = P.sessionStart();
    expect((await post('/ingest/session', start)).statusCode).toBe(201);
    const ready = async () => (await s.app.inject({ method: 'GET', url: '/health/ready' })).statusCode;
    const away = clickHouseAway(s.svc.stores.ch);
    const stack = Array.from({ length: 1500 }, (_, i) => `at frame${i} (app/src/module${i}.js:${i}:1)`).join('\n');
    try {
      expect(await ready()).toBe(200);
      let full: number | undefined;
      for (let i = 0; i < 200 && full === undefined; i++) {
        const r = await post('/ingest/crash', P.crash(start.sessionId, { stackTrace: stack, timestamp: P.T0 + i }));
        if (r.statusCode !== 201) full = r.statusCode;
      }
      expect(full).toBe(503);
      // the events' spool holds nothing: the crash reports' is the one that is full
      expect(s.svc.spool?.bytes).toBe(0);
      expect(await ready()).toBe(503);
    } finally {
      away.restore();
    }
    expect(await s.svc.crashPipeline?.settled(60_000)).toBe(true);
    expect(await ready()).toBe(200);
  }, 120_000);
});
