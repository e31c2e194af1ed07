import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouse, Settings } from '../../src/stores/clickhouse/port.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { T0, navigate, networkEvent, sessionStart } from '../helpers/payloads.ts';

// Reads of one session's events run on one engine thread (NARROW_READ_SETTINGS, port.ts): the
// engine splits even a tiny FINAL read across threads otherwise. A project's rows over a time
// range (network logs) keep the engine's threads. Every ClickHouse read the service makes here is
// recorded, with its settings, on the way to the real engine.

interface Read {
  sql: string;
  settings: Settings | undefined;
}

let s: TestServer;
let auth: { authorization: string };
let projectId: string;
const session = sessionStart();
const sid = session.sessionId as string;
const reads: Read[] = [];

function recordReads(ch: ClickHouse): void {
  const query = ch.query.bind(ch);
  const queryRaw = ch.queryRaw.bind(ch);
  ch.query = ((sql, params, settings) => {
    reads.push({ sql, settings });
    return query(sql, params, settings);
  }) as ClickHouse['query'];
  ch.queryRaw = (sql, params, format, settings) => {
    reads.push({ sql, settings });
    return queryRaw(sql, params, format, settings);
  };
}

/** The reads `run` made of `table`. */
async function readsOf(table: string, run: () => Promise<unknown>): Promise<Read[]> {
  reads.length = 0;
  await run();
  return reads.filter((r) => new RegExp(`\\bFROM ${table}\\b`).test(r.sql));
}

describe('reads of one session run on one engine thread', () => {
  beforeAll(async () => {
    s = await startTestServer({ EXPORT_CHUNK_ROWS: '4' });
    ({ auth, projectId } = await s.createProject('narrow reads'));
    const post = (url: string, payload: object) => s.app.inject({ method: 'POST', url, headers: auth, payload });
    expect((await post('/ingest/session', session)).statusCode).toBe(201);
    // Three bodies: three parts in the table, as a live session leaves them.
    for (let b = 0; b < 3; b++) {
      const events = Array.from({ length: 5 }, (_, i) =>
        b * 5 + i === 7 ? networkEvent(sid, 7, 500) : navigate(sid, b * 5 + i),
      );
      expect((await post('/ingest/events', { sessionId: sid, events })).statusCode).toBe(201);
    }
    recordReads(s.svc.stores.ch);
  });
  afterAll(() => s?.close());

  it("the events export (page, count and a stream's chunks) asks for one thread and returns every event", async () => {
    const url = `/export/events?sessionId=${sid}`;
    let page: { total: number; data: { sequenceNumber: number }[] } | undefined;
    let csv = '';
    const made = await readsOf('events', async () => {
      page = (await s.app.inject({ url: `${url}&limit=10`, headers: auth })).json();
      csv = (await s.app.inject({ url: `${url}&format=csv&stream=true`, headers: auth })).body;
    });
    expect(page?.total).toBe(15);
    expect(page?.data.map((e) => e.sequenceNumber)).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect(csv.trim().split('\n')).toHaveLength(16);
    // The count, the page, and the stream's key scans and chunks (15 rows in chunks of 4).
    expect(made.length).toBeGreaterThanOrEqual(6);
    for (const r of made) expect(r.settings?.max_threads, r.sql).toBe(1);
  });

  it('the dashboard timeline, the trail before a crash and the sessions list counts do too', async () => {
    const made = await readsOf('events', async () => {
      const timeline = await s.svc.events.timeline(projectId, sid, 3, 5);
      expect(timeline.data.map((e) => e.sequenceNumber)).toEqual([4, 5, 6, 7, 8]);
      const trail = await s.svc.events.before(projectId, sid, T0 + 60_000, 3);
      expect(trail).toHaveLength(3);
      expect((await s.svc.events.countBySession(projectId, [sid])).get(sid)).toBe(15);
    });
    expect(made).toHaveLength(3);
    for (const r of made) expect(r.settings?.max_threads, r.sql).toBe(1);
  });

  it("a project's network logs over a time range keep the engine's threads", async () => {
    const made = await readsOf('network_logs', async () => {
      const r = await s.app.inject({ url: '/export/network?limit=10', headers: auth });
      expect(r.json().total).toBe(1);
    });
    expect(made.length).toBeGreaterThan(0);
    for (const r of made) expect(r.settings?.max_threads, r.sql).toBeUndefined();
  });
});
