import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUtf8 } from 'node:buffer';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { neutraliseFormula } from '../../src/domain/csv.ts';
import { crash, networkRequest, sessionStart } from '../helpers/payloads.ts';

// Cells a spreadsheet runs as formulas once it skips a leading line feed, spaces, a BOM or an
// invisible character, or reads a full-width sign; and text that is not UTF-8, in every format.
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

describe('hidden formulas and bytes that are not UTF-8', () => {
  it('CSV neutralises a formula behind a zero-width space, a thin space, VT or FF, in JS and in ClickHouse alike', async () => {
    const hidden = ['\u200B=1+1', '\u2009=1+1', '\u000B=1+1', '\u000C=1+1', '\u200B\u2009 +cmd', '\u2060@SUM(A1)'];
    for (const h of hidden) expect(neutraliseFormula(h), JSON.stringify(h)).toBe(`'${h}`);
    expect(neutraliseFormula('\u200Bplain')).toBe('\u200Bplain');

    const p = await s.createProject();
    const st = sessionStart();
    await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st });
    const requests = hidden.map((h, i) => networkRequest({ url: `${h}/${i}`, timestamp: 1_767_225_600_000 + i }));
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
    const csv = (await s.app.inject({ method: 'GET', url: '/export/network?format=csv', headers: p.auth })).body;
    for (let i = 0; i < hidden.length; i++) expect(csv, JSON.stringify(hidden[i])).toContain(`"'${hidden[i]}/${i}"`);
  });

  it('bytes that are not UTF-8 become U+FFFD at the edge, the same in every export format', async () => {
    const p = await s.createProject();
    const st = sessionStart();
    await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st });
    const head = Buffer.from(
      `{"sessionId":"${st.sessionId}","events":[{"type":"navigate","sessionId":"${st.sessionId}","timestamp":1767225600000,"sequenceNumber":0,"from":null,"to":"/a`,
    );
    const tail = Buffer.from('b"}]}');
    const body = Buffer.concat([head, Buffer.from([0xff, 0xfe, 0xc3]), tail]);
    expect(isUtf8(body)).toBe(false);
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/events',
      headers: { ...p.auth, 'content-type': 'application/json' },
      payload: body,
    });
    expect(r.statusCode).toBe(201);
    for (const format of ['json', 'csv', 'ndjson']) {
      const stream = format === 'ndjson' ? '&stream=true' : '';
      const out = await s.app.inject({
        method: 'GET',
        url: `/export/events?sessionId=${st.sessionId}&format=${format}${stream}`,
        headers: p.auth,
      });
      expect(out.statusCode, format).toBe(200);
      expect(isUtf8(out.rawPayload), format).toBe(true);
      expect(out.body, format).toContain('/a\uFFFD');
    }
  });
});
