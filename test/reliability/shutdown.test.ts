import { afterAll, describe, expect, it } from 'vitest';
import { startServiceWithProject, type ChildService } from './child.ts';
import { Ledger, runLoad } from './load.ts';
import { checkServiceStores } from './verify.ts';
import * as P from '../helpers/payloads.ts';
import http from 'node:http';
import { sleep } from '../helpers/wait.ts';

/** A POST on a fresh connection whose body is sent in two halves: the second when told. */
function slowPost(url: string, headers: Record<string, string>, body: string) {
  const buf = Buffer.from(body);
  const half = Math.floor(buf.length / 2);
  const req = http.request(url, {
    method: 'POST',
    agent: false,
    headers: { ...headers, 'content-length': String(buf.length) },
  });
  const answer = new Promise<string>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.statusCode)));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
  req.write(buf.subarray(0, half));
  return { answer, finish: () => req.end(buf.subarray(half)) };
}

// Issue 6, item 3: SIGTERM under load stops accepting, lets in-flight requests finish, flushes
// the group-commit queue and closes the stores; nothing acknowledged is lost.

let svc: ChildService | undefined;
afterAll(async () => {
  await svc?.stop('SIGKILL');
});

describe('graceful shutdown', () => {
  it('SIGTERM mid-load: in-flight requests are answered 2xx, exit 0, every acknowledged write stored', async () => {
    const started = await startServiceWithProject('shutdown');
    svc = started.svc;
    const { dataDir, apiKey, projectId } = started;
    const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };

    const ledger = new Ledger();
    const load = runLoad({ baseUrl: () => svc!.url, auth: { authorization: `Bearer ${apiKey}` }, ledger, clients: 4 });
    const rounds: { inflight: number; answered: Record<string, number>; exit: unknown; shutdownMs: number }[] = [];
    for (let round = 0; round < 2; round++) {
      const before = ledger.requests;
      while (ledger.requests < before + 30) await sleep(50);
      // Requests in flight when SIGTERM lands: each on its own connection, headers and half the
      // body sent before the signal, the rest after it. Sent once, no retry: they must be answered.
      const s = P.sessionStart();
      expect(
        (await fetch(`${svc.url}/ingest/session`, { method: 'POST', headers: auth, body: JSON.stringify(s) })).status,
      ).toBe(201);
      ledger.sessions.add(s.sessionId);
      const batches = Array.from({ length: 8 }, (_, b) =>
        Array.from({ length: 500 }, (_, i) => P.customEvent(s.sessionId, b * 500 + i)),
      );
      const inflight = batches.map((events) =>
        slowPost(`${svc!.url}/ingest/events`, auth, JSON.stringify({ sessionId: s.sessionId, events })),
      );
      await sleep(300);
      const t0 = Date.now();
      const exited = svc.stop('SIGTERM');
      await sleep(300);
      for (const r of inflight) r.finish();
      const answers = await Promise.all(inflight.map((r) => r.answer));
      const exit = await exited;
      const answered: Record<string, number> = {};
      answers.forEach((a, b) => {
        answered[a] = (answered[a] ?? 0) + 1;
        if (a === '201') for (const e of batches[b]!) ledger.events.add(`${s.sessionId}:${e.sequenceNumber}`);
      });
      rounds.push({ inflight: batches.length, answered, exit, shutdownMs: Date.now() - t0 });
      expect(exit).toEqual({ code: 0, signal: null });
      // A request the server had accepted is answered, never cut: only refusals of new connections.
      expect(answered).toEqual({ 201: batches.length });
      await svc.start();
    }
    await load.stop();
    expect(await svc.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    const check = await checkServiceStores(dataDir, projectId, ledger);
    console.log(
      'shutdown:',
      JSON.stringify(
        {
          rounds,
          requests: ledger.requests,
          retried: ledger.retried,
          networkErrors: ledger.networkErrors,
          serverErrors: ledger.serverErrorBodies,
          check,
        },
        null,
        1,
      ),
    );
    for (const e of ledger.serverErrorBodies)
      expect(e).toEqual({ status: 503, body: { error: expect.any(String), code: 'unavailable' } });
    expect(check.sessions).toMatchObject({ missing: [], unexpected: [], endedNotEnded: [] });
    expect(check.events).toMatchObject({ missing: [] });
    expect(check.network).toMatchObject({ missing: [], unexpected: 0 });
    expect(check.crashes).toMatchObject({ missing: [], unexpected: [], counterMismatch: [] });
  }, 180_000);
});
