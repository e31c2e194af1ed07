import { afterAll, describe, expect, it } from 'vitest';
import { startServiceWithProject, type ChildService } from './child.ts';
import { Ledger, runLoad } from './load.ts';
import { checkServiceStores, expectExactlyOnce } from './verify.ts';
import { sleep } from '../helpers/wait.ts';

// Issue 6, item 1: SIGKILL the service mid-load several times; every acknowledged write must be
// in the stores exactly once afterwards. Embedded stores by default; the machine's Postgres and
// Redis when DATABASE_URL / REDIS_URL are set.
const KILLS = Number(process.env.KILLS ?? 4);
const CLIENTS = Number(process.env.LOAD_CLIENTS ?? 6);

let svc: ChildService | undefined;
afterAll(async () => {
  await svc?.stop('SIGKILL');
});

describe('crash and restart under load', () => {
  it(`survives ${KILLS} SIGKILLs: every acknowledged session, event, network log and crash is stored exactly once`, async () => {
    const started = await startServiceWithProject('crash-restart');
    svc = started.svc;
    const { dataDir, apiKey, projectId } = started;

    const ledger = new Ledger();
    const load = runLoad({
      baseUrl: () => svc!.url,
      auth: { authorization: `Bearer ${apiKey}` },
      ledger,
      clients: CLIENTS,
    });
    const kills: { afterRequests: number; exit: string }[] = [];
    for (let k = 0; k < KILLS; k++) {
      const before = ledger.requests;
      // Let load flow in this incarnation (some requests acknowledged), then kill at a random moment.
      while (ledger.requests < before + 20) await sleep(50);
      await sleep(500 + Math.random() * 2500);
      const exit = await svc.stop('SIGKILL');
      kills.push({ afterRequests: ledger.requests, exit: `${exit.code ?? ''}${exit.signal ?? ''}` });
      await svc.start(); // throws with the process output if the stores do not come back
    }
    const beforeEnd = ledger.requests;
    while (ledger.requests < beforeEnd + 20) await sleep(50);
    await load.stop();
    const term = await svc.stop('SIGTERM');
    expect(term).toEqual({ code: 0, signal: null });

    const check = await checkServiceStores(dataDir, projectId, ledger);
    const summary = {
      kills: kills.length,
      requests: ledger.requests,
      retried: ledger.retried,
      networkErrors: ledger.networkErrors,
      serverErrors: ledger.serverErrorBodies,
      check,
    };
    console.log('crash-restart:', JSON.stringify({ ...summary, kills }, null, 1));

    expect(kills.every((k) => k.exit === 'SIGKILL')).toBe(true);
    expect(ledger.retried.network).toBeGreaterThan(0); // the kills did cut requests off
    expectExactlyOnce(check);
    expect(check.sessions.stored).toBe(check.sessions.acked);
    expect(check.crashes.stored).toBe(check.crashes.acked);
  }, 240_000);
});
