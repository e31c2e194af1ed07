import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEADER_BYTES, readRecords, recordHeader } from '../../src/stores/spool/records.ts';
import { ingestLine } from '../../src/repos/ingestLines.ts';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.ts';
import * as P from '../helpers/payloads.ts';
import { TcpProxy } from '../reliability/tcpProxy.ts';
import { startClickHouseStandIn, type ClickHouseStandIn } from '../helpers/clickhouseStandIn.ts';
import { failInserts, refusingRowsWith } from '../helpers/insertFaults.ts';
import { sleep } from '../helpers/wait.ts';
import { metricValue } from '../helpers/inspect.ts';

// Issue 25: the durable spool between acknowledgement and ClickHouse, on the real stores.
const record = (payload: Buffer, rows: number) => Buffer.concat([recordHeader([payload], rows), payload]);

/** A process that has exited: its pid is free (nothing runs under it now). */
function deadPid(): Promise<number> {
  const p = spawn(process.execPath, ['-e', '0']);
  return new Promise((r) => p.once('exit', () => r(p.pid!)));
}

describe('spool records', () => {
  it('read back as written; a torn record ends the segment, a corrupt last one is set aside', () => {
    const a = Buffer.from('{"a":1}\n');
    const b = Buffer.from('{"b":22}\n');
    const whole = Buffer.concat([record(a, 1), record(b, 2)]);
    expect(readRecords(whole).records.map((r) => [Buffer.concat(r.chunks).toString(), r.rows])).toEqual([
      [a.toString(), 1],
      [b.toString(), 2],
    ]);
    expect(readRecords(whole).tornBytes).toBe(0);
    for (let cut = 1; cut < record(b, 2).length; cut++) {
      const torn = whole.subarray(0, whole.length - cut);
      const read = readRecords(torn);
      expect(read.records.map((r) => Buffer.concat(r.chunks).toString())).toEqual([a.toString()]);
      expect(read.tornBytes).toBe(torn.length - record(a, 1).length);
    }
    const corrupt = Buffer.from(whole);
    corrupt[corrupt.length - 3]! ^= 0x01; // one bit of b's payload
    expect(readRecords(corrupt).records).toHaveLength(1);
    // written whole, so acknowledged: set aside, not taken for a torn write
    expect(readRecords(corrupt).corrupt.map((c) => c.bytes.length)).toEqual([record(b, 2).length]);
    expect(readRecords(corrupt).tornBytes).toBe(0);
    const badHeader = Buffer.from(whole);
    badHeader.writeUInt32LE(7, record(a, 1).length + 4); // b's row count, not matching its CRC
    expect(readRecords(badHeader).records).toHaveLength(1);
  });

  it('a bad byte mid-segment: that record is set aside whole and reading resumes at the next valid one', () => {
    const bodies = Array.from({ length: 10 }, (_, i) => Buffer.from(`{"n":${i},"pad":"${'x'.repeat(i * 7)}"}\n`));
    const whole = Buffer.concat(bodies.map((b) => record(b, 1)));
    const at = bodies.slice(0, 4).reduce((n, b) => n + record(b, 1).length, 0);
    for (const offset of [0, 4, 8, HEADER_BYTES, HEADER_BYTES + 8]) {
      // its length, rows, CRC, and payload bytes
      const bad = Buffer.from(whole);
      bad[at + offset]! ^= 0x40;
      const read = readRecords(bad);
      expect(read.records.map((r) => Buffer.concat(r.chunks).toString())).toEqual(
        bodies.filter((_, i) => i !== 4).map(String),
      );
      expect(read.corrupt).toEqual([{ offset: at, bytes: bad.subarray(at, at + record(bodies[4]!, 1).length) }]);
      expect(read.tornBytes).toBe(0);
    }
  });
});

describe('the spool in the service (embedded stores)', () => {
  let s: TestServer;
  let auth: { authorization: string };
  let projectId: string;
  let spoolRoot: string;
  let orphanDir: string;
  const orphanSession = P.sessionStart();

  beforeAll(async () => {
    const dataDir = tempDataDir();
    spoolRoot = path.join(dataDir, 'spool');
    // First a service without a spool, to make the project and a session in its Postgres.
    const first = await startTestServer({}, dataDir);
    ({ auth, projectId } = await first.createProject('spool'));
    expect(
      (await first.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: orphanSession }))
        .statusCode,
    ).toBe(201);
    await first.close();
    // A process that died on this volume: two acknowledged bodies and a third torn mid-write.
    orphanDir = path.join(spoolRoot, 'dead-process');
    fs.mkdirSync(orphanDir, { recursive: true });
    fs.writeFileSync(
      path.join(orphanDir, 'owner.lock'),
      JSON.stringify({ token: 'x', pid: await deadPid(), host: os.hostname(), at: Date.now() }),
    );
    const sid = orphanSession.sessionId;
    const body = (seq: number) =>
      ingestLine(projectId, Buffer.from(JSON.stringify({ sessionId: sid, events: [P.navigate(sid, seq)] })));
    const torn = record(body(2), 1);
    fs.writeFileSync(
      path.join(orphanDir, `${'1'.padStart(12, '0')}-${Date.now() - 5000}.seg`),
      Buffer.concat([record(body(0), 1), record(body(1), 1), torn.subarray(0, torn.length - 5)]),
    );
    s = await startTestServer(
      { INGEST_SPOOL: 'true', SPOOL_LOAD_INTERVAL_MS: '100', RATE_LIMIT_INGEST_PER_MIN: '100000' },
      dataDir,
      undefined,
      // These tests read while the spool still holds bodies, or with ClickHouse away.
      { readAfterSettled: false },
    );
  });
  afterAll(() => s?.close());

  const exportedSeqs = async (sid: string) => {
    const r = await s.app.inject({ method: 'GET', url: `/export/events?sessionId=${sid}&limit=1000`, headers: auth });
    expect(r.statusCode).toBe(200);
    return (r.json().data as { sequenceNumber: number }[]).map((e) => e.sequenceNumber);
  };

  it("takes over a dead process's spool directory: its acknowledged bodies are loaded, the torn one dropped, the directory removed", async () => {
    expect(await s.svc.spool!.settled()).toBe(true);
    expect(await exportedSeqs(orphanSession.sessionId)).toEqual([0, 1]);
    expect(fs.existsSync(orphanDir)).toBe(false);
    expect(s.svc.spool!.tornBytes).toBeGreaterThan(0);
  });

  it('acknowledges once spooled; the rows reach the export API and the segments are deleted after their insert', async () => {
    const start = P.sessionStart();
    const sid = start.sessionId;
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: start })).statusCode,
    ).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, b) =>
        s.app.inject({
          method: 'POST',
          url: '/ingest/events',
          headers: auth,
          payload: { sessionId: sid, events: [P.navigate(sid, b * 2), P.networkEvent(sid, b * 2 + 1, 500)] },
        }),
      ),
    );
    expect(answers.map((r) => r.statusCode)).toEqual(answers.map(() => 201));
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: '/ingest/network',
          headers: auth,
          payload: { sessionId: sid, requests: [P.networkRequest()] },
        })
      ).statusCode,
    ).toBe(201);
    // Visible once the loader has inserted everything spooled (the events and the network body
    // may be in different loads); waited for, not timed.
    expect(await s.svc.spool!.settled()).toBe(true);
    expect(await exportedSeqs(sid)).toEqual(Array.from({ length: 80 }, (_, i) => i));
    const net = await s.app.inject({
      method: 'GET',
      url: `/export/network?sessionId=${sid}&limit=1000`,
      headers: auth,
    });
    expect(net.json().total).toBe(41); // 40 mirrored network events and one request
    // the session's Postgres side effect (the network-error flag) is the loader's, with the lines
    const sess = await s.app.inject({ method: 'GET', url: '/export/sessions?limit=1000', headers: auth });
    expect(sess.json().data.find((x: { id: string }) => x.id === sid)).toMatchObject({ hasNetworkErrors: true });
    expect(fs.readdirSync(s.svc.spool!.dir).filter((f) => f.endsWith('.seg'))).toEqual([]);
    const metrics = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^flightrec_spool_bytes 0$/m);
    expect(metrics).toMatch(/^flightrec_spool_loaded_rows \d+$/m);
    expect(metrics).toMatch(/^flightrec_spool_oldest_unloaded_seconds 0$/m);
  });

  it('a body the engine refuses as received is loaded as this process serialises it', async () => {
    const start = P.sessionStart();
    const sid = start.sessionId;
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: start })).statusCode,
    ).toBe(201);
    // An integer spelled 1e3: JavaScript reads 1000, the engine does not read it as an integer.
    const raw = JSON.stringify({ sessionId: sid, events: [P.navigate(sid, 0), P.navigate(sid, 1)] }).replace(
      '"sequenceNumber":1',
      '"sequenceNumber":1e0',
    );
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/events',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: raw,
    });
    expect(r.statusCode).toBe(201);
    expect(await s.svc.spool!.settled()).toBe(true);
    expect(await exportedSeqs(sid)).toEqual([0, 1]);
    expect(s.svc.spool!.refusedRecords).toBe(0);
  });

  it('a body the engine refuses however it is written is set aside: the others of its load are stored, the loader goes on', async () => {
    const start = P.sessionStart();
    const sid = start.sessionId;
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: start })).statusCode,
    ).toBe(201);
    // rows the engine would refuse, recognised by a route: every insert containing them fails
    const restore = failInserts(s.svc.stores.ch, refusingRowsWith('/poison'));
    try {
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, b) =>
          s.app.inject({
            method: 'POST',
            url: '/ingest/events',
            headers: auth,
            payload: { sessionId: sid, events: [P.navigate(sid, b, b === 5 ? '/poison' : `/screen/${b}`)] },
          }),
        ),
      );
      expect(answers.map((r) => r.statusCode)).toEqual(answers.map(() => 201));
      expect(await s.svc.spool!.settled()).toBe(true);
    } finally {
      restore();
    }
    expect(await exportedSeqs(sid)).toEqual([0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11]);
    expect(s.svc.spool!.refusedRecords).toBe(1);
    const setAside = fs.readFileSync(path.join(spoolRoot, `refused-${path.basename(s.svc.spool!.dir)}.ndjson`), 'utf8');
    expect(
      setAside
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).body.events[0].to),
    ).toEqual(['/poison']);
    expect((await s.app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(
      /^flightrec_spool_refused_bodies 1$/m,
    );
  });
});

describe('a ClickHouse outage with the spool (HTTP ClickHouse behind a TCP proxy)', () => {
  let shim: ClickHouseStandIn;
  let proxy: TcpProxy;
  let s: TestServer;

  beforeAll(async () => {
    shim = await startClickHouseStandIn(tempDataDir());
    proxy = new TcpProxy({ host: '127.0.0.1', port: shim.port });
    await proxy.listen();
    s = await startTestServer(
      {
        CLICKHOUSE_URL: `http://127.0.0.1:${proxy.port}`,
        INGEST_SPOOL: 'true',
        SPOOL_MAX_BYTES: String(1024 * 1024),
        SPOOL_LOAD_INTERVAL_MS: '200',
        RATE_LIMIT_INGEST_PER_MIN: '1000000',
      },
      undefined,
      undefined,
      { readAfterSettled: false },
    );
  }, 60_000);
  afterAll(async () => {
    proxy?.restore();
    await s?.close();
    await proxy?.close();
    shim?.child.kill();
  });

  it('keeps acknowledging while ClickHouse is away, answers 503 + Retry-After once the spool is full, and loads everything when it is back', async () => {
    const { auth } = await s.createProject('outage');
    const start = P.sessionStart();
    const sid = start.sessionId;
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: start })).statusCode,
    ).toBe(201);
    const pad = 'p'.repeat(400);
    const batch = (b: number) => ({
      sessionId: sid,
      events: Array.from({ length: 100 }, (_, i) => ({ ...P.customEvent(sid, b * 100 + i), properties: { pad } })),
    });

    proxy.cut('refuse');
    // ClickHouse away, the spool empty: the replica stays ready (its balancer keeps it)
    expect((await s.app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    const acked: number[] = [];
    let refused: { status: number; retryAfter: unknown; body: unknown } | undefined;
    const t0 = Date.now();
    for (let b = 0; Date.now() - t0 < 3000 || !refused; b++) {
      const r = await s.app.inject({ method: 'POST', url: '/ingest/events', headers: auth, payload: batch(b) });
      if (r.statusCode === 201) acked.push(b);
      else {
        refused ??= { status: r.statusCode, retryAfter: r.headers['retry-after'], body: r.json() };
        await sleep(50);
      }
      expect([201, 503]).toContain(r.statusCode);
      if (Date.now() - t0 > 20_000) break;
    }
    expect(acked.length).toBeGreaterThan(5);
    expect(refused).toEqual({ status: 503, retryAfter: '1', body: { error: expect.any(String), code: 'queue_full' } });
    expect((await s.app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(503); // full: no longer ready
    const metrics = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metricValue(metrics, 'flightrec_spool_bytes')).toBeGreaterThan(900_000);
    expect(metricValue(metrics, 'flightrec_spool_oldest_unloaded_seconds')).toBeGreaterThan(1);
    // exports need ClickHouse too: none is read while it is away

    proxy.restore();
    expect(await s.svc.spool!.settled(60_000)).toBe(true);
    const r = await s.app.inject({ method: 'GET', url: `/export/events?sessionId=${sid}&limit=1000`, headers: auth });
    expect(r.json().total).toBe(acked.length * 100);
    const pages = Math.ceil((acked.length * 100) / 1000);
    const seqs = new Set<number>();
    for (let p = 1; p <= pages; p++) {
      const page = await s.app.inject({
        method: 'GET',
        url: `/export/events?sessionId=${sid}&limit=1000&page=${p}`,
        headers: auth,
      });
      for (const e of page.json().data as { sequenceNumber: number }[]) seqs.add(e.sequenceNumber);
    }
    expect(seqs.size).toBe(acked.length * 100);
    expect([...seqs].every((q) => acked.includes(Math.floor(q / 100)))).toBe(true);
    // and ingestion takes bodies again
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/events', headers: auth, payload: batch(100_000) }))
        .statusCode,
    ).toBe(201);
  }, 120_000);
});
