import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { crash, networkRequest, sessionStart } from './helpers/payloads.ts';

// Finding 7 of the security probe: cells a spreadsheet runs as formulas once it skips a
// leading line feed, spaces or a BOM, or reads a full-width sign.
const TRICKY = ['\n=1+1', ' =1+1', '  @SUM(A1)', '\uFF1D1+1', '\uFEFF=1+1', '\u00A0+1', '=1+1', '\t=1'];

let s: TestServer;
let p: Awaited<ReturnType<TestServer['createProject']>>;
beforeAll(async () => {
  s = await startTestServer();
  p = await s.createProject();
  const st = sessionStart();
  await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st });
  const requests = TRICKY.map((url, i) => networkRequest({ url, timestamp: 1_767_225_600_000 + i }));
  expect(
    (
      await s.app.inject({
        method: 'POST',
        url: '/ingest/network',
        headers: p.auth,
        payload: { sessionId: st.sessionId, requests },
      })
    ).statusCode,
  ).toBe(201);
  for (const [i, message] of TRICKY.entries()) {
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/crash',
      headers: p.auth,
      payload: crash(st.sessionId, { message, stackTrace: `at f${i} (x.js:1:1)` }),
    });
    expect(r.statusCode).toBe(201);
  }
});
afterAll(async () => {
  await s?.close();
});

const quoted = (v: string) => `"'${v.replaceAll('"', '""')}"`;

describe('CSV formula neutralisation', () => {
  it('ClickHouse-built CSV (network logs), paged and streamed', async () => {
    for (const q of ['format=csv&limit=1000', 'format=csv&stream=true']) {
      const csv = (await s.app.inject({ method: 'GET', url: `/export/network?${q}`, headers: p.auth })).body;
      for (const v of TRICKY) expect(csv, JSON.stringify(v)).toContain(quoted(v));
    }
  });

  it('JS-built CSV (crash groups), paged and streamed', async () => {
    for (const q of ['format=csv&limit=1000', 'format=csv&stream=true']) {
      const csv = (await s.app.inject({ method: 'GET', url: `/export/crashes?${q}`, headers: p.auth })).body;
      // Each group's message cell (the second) starts with the neutralising quote. (The
      // message's leading BOM does not survive the crash path, so cells are not compared whole.)
      const messages = [...csv.matchAll(/\r\n"[0-9a-f-]{36}","([^"]*(?:""[^"]*)*)"/g)].map((m) => m[1]!);
      expect(messages).toHaveLength(TRICKY.length);
      for (const m of messages) expect(m.startsWith("'"), JSON.stringify(m)).toBe(true);
      for (const v of TRICKY.filter((x) => !x.startsWith('\uFEFF')))
        expect(csv, JSON.stringify(v)).toContain(quoted(v));
    }
  });
});
