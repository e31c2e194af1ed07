import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { sessionStart } from '../helpers/payloads.ts';
import { clickHouseAway } from '../helpers/insertFaults.ts';
import { waitFor } from '../helpers/wait.ts';
import { metricValue } from '../helpers/inspect.ts';

// Session facts (release health's rows) go through a spool of their own: a session start is
// answered once its fact is on disk, not once an insert of it committed. On the real stores.

const HOUR = 3_600_000;
const at = Date.now() - 2 * HOUR;
const day = new Date(at).toISOString().slice(0, 10);

let s: TestServer;
beforeAll(async () => {
  // Reads here must not wait for the spools: the facts spool cannot load while the store is away.
  s = await startTestServer({}, undefined, undefined, { readAfterSettled: false });
});
afterAll(async () => {
  await s?.app.close();
});

describe('the session facts spool', () => {
  it('starts are answered while ClickHouse is away; once it is back, the release counts each session once', async () => {
    const { auth } = await s.createProject('facts spool');
    // Away: every session_facts insert fails and the store answers no ping (not a refusal of the rows).
    const away = clickHouseAway(s.svc.stores.ch, ['session_facts']);
    const starts = Array.from({ length: 6 }, (_, i) =>
      sessionStart({ startedAt: at + i, userId: `u${i % 3}`, device: { ...sessionStart().device, appVersion: '7.0' } }),
    );
    try {
      for (const start of [...starts, starts[0]]) {
        // the last one is a retry of the first: the same fact
        const r = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: start });
        expect(r.statusCode, r.body).toBe(201);
      }
      expect(s.svc.factsSpool?.bytes).toBeGreaterThan(0);
      const metrics = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(metricValue(metrics, 'flightrec_facts_spool_bytes')).toBe(s.svc.factsSpool?.bytes);
      // the loader tried and failed: the spool still holds every fact
      await waitFor('a load of the facts tried', () => away.tried() > 0);
      expect(s.svc.factsSpool?.bytes).toBeGreaterThan(0);
    } finally {
      away.restore();
    }
    expect(await s.svc.factsSpool?.settled(60_000)).toBe(true);
    const r = await s.app.inject({ method: 'GET', url: `/export/releases?from=${day}&to=${day}`, headers: auth });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().data).toEqual([
      expect.objectContaining({ appVersion: '7.0', platform: 'ios', sessions: 6, users: 3 }),
    ]);
  }, 120_000);
});
