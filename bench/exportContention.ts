import { startTestServer, tempDataDir } from '../test/helpers/server.ts';
import { networkRequest, sessionStart } from '../test/helpers/payloads.ts';

/**
 * How much a long streamed export slows the embedded engine's other queries (chDB runs one
 * query at a time). For each EXPORT_CHUNK_ROWS in CHUNKS (default 20000,2000): BATCHES × 200
 * network-log rows (default 400) in one project, then another project's
 * `/export/network?limit=10` every 20 ms, first quiet, then while the first project's table is
 * streamed as CSV. Prints p50/p95 of those queries and the stream's duration.
 *   CHUNKS=20000,2000 BATCHES=1500 npm run bench:contention
 */
async function main() {
  for (const chunk of (process.env.CHUNKS ?? '20000,2000').split(',')) {
    const s = await startTestServer(
      { EXPORT_CHUNK_ROWS: chunk, RATE_LIMIT_EXPORT_PER_MIN: '100000', RATE_LIMIT_INGEST_PER_MIN: '100000' },
      tempDataDir(),
    );
    const p = await s.createProject();
    const q = await s.createProject();
    const st = sessionStart();
    await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st });
    const st2 = sessionStart();
    await s.app.inject({ method: 'POST', url: '/ingest/session', headers: q.auth, payload: st2 });
    await s.app.inject({
      method: 'POST',
      url: '/ingest/network',
      headers: q.auth,
      payload: { sessionId: st2.sessionId, requests: [networkRequest()] },
    });
    for (let b = 0; b < Number(process.env.BATCHES ?? 400); b++) {
      const requests = Array.from({ length: 200 }, (_, i) =>
        networkRequest({ timestamp: 1_767_225_600_000 + b * 1000 + i, url: `https://api.example.com/${b}/${i}` }),
      );
      await s.app.inject({
        method: 'POST',
        url: '/ingest/network',
        headers: p.auth,
        payload: { sessionId: st.sessionId, requests },
      });
    }
    const sample = async (n: number) => {
      const t: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await s.app.inject({ method: 'GET', url: '/export/network?limit=10', headers: q.auth });
        t.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 20));
      }
      t.sort((a, b) => a - b);
      return `p50 ${t[Math.floor(t.length / 2)]!.toFixed(0)} p95 ${t[Math.floor(t.length * 0.95)]!.toFixed(0)} n ${t.length}`;
    };
    const quiet = await sample(30);
    let done = false;
    const t0 = performance.now();
    const exp = s.app
      .inject({ method: 'GET', url: '/export/network?stream=true&format=csv', headers: p.auth })
      .then((r) => {
        done = true;
        return r;
      });
    const busy: number[] = [];
    while (!done) {
      const a = performance.now();
      await s.app.inject({ method: 'GET', url: '/export/network?limit=10', headers: q.auth });
      busy.push(performance.now() - a);
      await new Promise((r) => setTimeout(r, 20));
    }
    const r = await exp;
    busy.sort((a, b) => a - b);
    console.log(
      `CHUNK ${chunk}: export ${(performance.now() - t0).toFixed(0)} ms, ${r.body.length} bytes; quiet ${quiet}; during export p50 ${busy[Math.floor(busy.length / 2)]?.toFixed(0)} p95 ${busy[Math.floor(busy.length * 0.95)]?.toFixed(0)} n ${busy.length}`,
    );
    await s.close();
  }
}

await main();
