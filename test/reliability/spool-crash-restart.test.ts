import { afterAll, describe, expect, it } from 'vitest';
import { startServiceWithProject, type ChildService } from './child.ts';
import { Ledger, runLoad } from './load.ts';
import { checkServiceStores, expectExactlyOnce } from './verify.ts';
import { sleep } from '../helpers/wait.ts';

// Issue 25: kill -9 under load with the ingest spool. Bodies are acknowledged once fsync'd to
// the spool, before ClickHouse has them; each restart takes over the dead process's spool
// directory and loads it. Counted through the export API (every acknowledged event once), then
// in the stores themselves (nothing doubled under FINAL, every session, log and crash there).
const KILLS = Number(process.env.KILLS ?? 3);
const CLIENTS = Number(process.env.LOAD_CLIENTS ?? 6);

let svc: ChildService | undefined;
afterAll(async () => {
  await svc?.stop('SIGKILL');
});

async function exportedEvents(url: string, auth: { authorization: string }, sessionId: string): Promise<number[]> {
  const seqs: number[] = [];
  for (let page = 1; ; page++) {
    const r = await fetch(`${url}/export/events?sessionId=${sessionId}&limit=1000&page=${page}`, { headers: auth });
    if (r.status !== 200) throw new Error(`export answered ${r.status}: ${await r.text()}`);
    const body = (await r.json()) as { data: { sequenceNumber: number }[]; pages: number };
    seqs.push(...body.data.map((e) => e.sequenceNumber));
    if (page >= body.pages) return seqs;
  }
}

describe('kill -9 under load with the ingest spool', () => {
  it(`survives ${KILLS} SIGKILLs: every acknowledged event is exported once, and the stores hold everything exactly once`, async () => {
    const started = await startServiceWithProject('spool-crash-restart', {
      INGEST_SPOOL: 'true',
      SPOOL_LOAD_INTERVAL_MS: '300',
      RATE_LIMIT_EXPORT_PER_MIN: '1000000',
    });
    svc = started.svc;
    const { dataDir, apiKey, projectId } = started;
    const auth = { authorization: `Bearer ${apiKey}` };

    const ledger = new Ledger();
    const load = runLoad({ baseUrl: () => svc!.url, auth, ledger, clients: CLIENTS });
    for (let k = 0; k < KILLS; k++) {
      const before = ledger.requests;
      while (ledger.requests < before + 20) await sleep(50);
      await sleep(500 + Math.random() * 2000);
      const exit = await svc.stop('SIGKILL');
      expect(exit.signal).toBe('SIGKILL');
      await svc.start();
    }
    const beforeEnd = ledger.requests;
    while (ledger.requests < beforeEnd + 20) await sleep(50);
    await load.stop();
    expect(ledger.retried.network).toBeGreaterThan(0); // the kills did cut requests off

    // Through the export API: each session's acknowledged events, once each (waiting for the loader).
    const acked = new Map<string, Set<number>>();
    for (const k of ledger.events) {
      const [sid, seq] = k.split(':');
      if (!acked.has(sid!)) acked.set(sid!, new Set());
      acked.get(sid!)!.add(Number(seq));
    }
    let mismatched: string[] = [];
    for (let attempt = 0; attempt < 60; attempt++) {
      mismatched = [];
      for (const [sid, seqs] of acked) {
        const got = await exportedEvents(svc.url, auth, sid);
        const same = got.length === seqs.size && new Set(got).size === got.length && got.every((q) => seqs.has(q));
        if (!same) mismatched.push(`${sid}: exported ${got.length}, acknowledged ${seqs.size}`);
      }
      if (mismatched.length === 0) break;
      await sleep(500);
    }
    expect(mismatched).toEqual([]);

    const term = await svc.stop('SIGTERM');
    expect(term).toEqual({ code: 0, signal: null });
    const check = await checkServiceStores(dataDir, projectId, ledger);
    console.log(
      'spool crash-restart:',
      JSON.stringify({
        requests: ledger.requests,
        retried: ledger.retried,
        sessions: acked.size,
        events: ledger.events.size,
        check: { events: check.events, network: { ...check.network, missing: check.network.missing.length } },
      }),
    );
    expectExactlyOnce(check);
  }, 300_000);
});
