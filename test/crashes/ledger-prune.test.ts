import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { manualClock } from '../helpers/wait.ts';
import * as P from '../helpers/payloads.ts';
import { createAlertWorker, type AlertWorker } from '../../src/workers/index.ts';
import { crashLedgerPrune, LEDGER_PRUNE_INTERVAL_MS } from '../../src/workers/crashLedgerPrune.ts';
import { crashOccurrenceId } from '../../src/domain/crashGrouping.ts';
import { resolveSecretsKey } from '../../src/services/secretsKey.ts';
import { silentLog } from '../../src/lib/log.ts';

// The occurrence ledger (postgres/018) pruned to CRASH_LEDGER_DAYS by the worker (postgres/020;
// docs/decisions.md, "The ledger's window"). Real stores; the worker is driven by hand
// (RUN_WORKER=false, `runDue`) on a clock the test moves.
let s: TestServer;
let w: AlertWorker;
const clock = manualClock();
beforeAll(async () => {
  s = await startTestServer({ CRASH_LEDGER_DAYS: '30' });
  w = createAlertWorker(
    s.svc.config,
    { repos: s.repos, secretsKey: resolveSecretsKey(s.svc.config).key, clock },
    silentLog,
  );
});
afterAll(async () => {
  await w?.stop();
  await s?.close();
});

const pg = async () => (await s.stores()).pg;
async function ledgerIds(projectId: string): Promise<string[]> {
  const r = await (await pg()).query<{ id: string }>(
    'SELECT id FROM crash_occurrence_ledger WHERE project_id = $1 ORDER BY id',
    [projectId],
  );
  return r.rows.map((x) => x.id);
}
async function counters(projectId: string) {
  const r = await (await pg()).query(
    `SELECT id, crash_occurrences, fatal_occurrences, crash_users, crash_last_seen_at
     FROM crash_groups WHERE project_id = $1 ORDER BY id`,
    [projectId],
  );
  return r.rows.map((g) => ({ ...g, crash_occurrences: Number(g.crash_occurrences) }));
}
async function age(projectId: string, ids: string[], days: number) {
  await (await pg()).query(
    `UPDATE crash_occurrence_ledger SET recorded_at = now() - make_interval(days => $3)
     WHERE project_id = $1 AND id = ANY($2::text[])`,
    [projectId, ids, days],
  );
}
/** Synthetic ledger rows of a project of their own, recorded `days` ago. */
async function seed(projectId: string, n: number, days: number) {
  await (await pg()).query(
    `INSERT INTO crash_occurrence_ledger (project_id, id, group_id, recorded_at)
     SELECT $1, $4 || i, $2, now() - make_interval(days => $3) FROM generate_series(1, $5::int) i`,
    [projectId, randomUUID(), days, `${days}d-${randomUUID()}-`, n],
  );
}
const count = async (projectId: string) => (await ledgerIds(projectId)).length;

describe('the crash occurrence ledger', () => {
  it('loses ids older than CRASH_LEDGER_DAYS at the worker, keeps newer ones, and leaves the counters as they were', async () => {
    const p = await s.createProject();
    const st = P.sessionStart();
    const post = async (c: object) =>
      expect(
        (await s.app.inject({ method: 'POST', url: '/ingest/crash', headers: p.auth, payload: c })).statusCode,
      ).toBe(201);
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st })).statusCode,
    ).toBe(201);
    const reports = Array.from({ length: 6 }, (_, i) =>
      P.crash(st.sessionId, {
        message: i % 2 ? 'TypeError: a' : 'RangeError: b',
        stackTrace: `${i % 2 ? 'TypeError: a' : 'RangeError: b'}\n${P.crash(st.sessionId).stackTrace}`,
        timestamp: P.T0 + 9000 + i,
      }),
    );
    for (const c of reports) await post(c);
    await s.settled();
    const ids = reports.map((c) => crashOccurrenceId(c as never));
    expect(await ledgerIds(p.projectId)).toEqual([...ids].sort());
    const before = await counters(p.projectId);
    expect(before.map((g) => g.crash_occurrences)).toEqual([3, 3]);

    await age(p.projectId, ids.slice(0, 3), 31);
    await age(p.projectId, ids.slice(3, 4), 29); // inside the window
    await w.worker.runDue();
    expect(await ledgerIds(p.projectId)).toEqual(ids.slice(3).sort());
    expect(await counters(p.projectId)).toEqual(before);

    // A retry inside the window still counts nothing.
    await post(reports[4] as object);
    await s.settled();
    expect(await counters(p.projectId)).toEqual(before);
    // The window's documented cost: a retry of a pruned id is counted again in Postgres
    // (ClickHouse still collapses it). CRASH_LEDGER_DAYS must exceed any SDK retry delay.
    await post(reports[0] as object);
    await s.settled();
    const after = await counters(p.projectId);
    expect(after.reduce((n, g) => n + g.crash_occurrences, 0)).toBe(7);
    const ch = await s.svc.stores.ch.query<{ c: number }>(
      'SELECT uniqExact(id) AS c FROM crash_occurrences WHERE project_id = {p:String}',
      { p: p.projectId },
    );
    expect(Number(ch[0]?.c)).toBe(6);
  });

  it('prunes a backlog of many chunks to the end in one sweep when its chunks are not bounded, each chunk its own statement', async () => {
    const old = randomUUID();
    const fresh = randomUUID();
    await seed(old, 25, 40);
    await seed(fresh, 3, 1);
    expect(await count(old)).toBe(25);
    const prune = crashLedgerPrune({
      config: { crashLedgerDays: 30 },
      pg: await pg(),
      log: silentLog,
      chunkRows: 4,
      chunksPerSweep: Number.POSITIVE_INFINITY,
    });
    await prune.sweep();
    expect(await count(old)).toBe(0);
    expect(await count(fresh)).toBe(3);
  });

  it("as the worker's sweep, deletes a bounded slice of a backlog a round and goes on at the next, then waits an interval", async () => {
    const old = randomUUID();
    await seed(old, 22, 40);
    const at = manualClock();
    const prune = crashLedgerPrune({
      config: { crashLedgerDays: 30 },
      pg: await pg(),
      log: silentLog,
      now: at,
      chunkRows: 4,
      chunksPerSweep: 2,
    });
    const left: number[] = [];
    for (let i = 0; i < 3; i++) {
      await prune.sweep();
      left.push(await count(old));
    }
    expect(left).toEqual([14, 6, 0]);
    // Pruned up to the window: the next pass starts an interval later, whatever has aged since.
    await seed(old, 5, 40);
    await prune.sweep();
    expect(await count(old)).toBe(5);
    at.advance(LEDGER_PRUNE_INTERVAL_MS);
    await prune.sweep();
    expect(await count(old)).toBe(0);
  });
});
