import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logCapture, startTestServer, tempDataDir, type TestServer } from './helpers/server.ts';
import { dashboardProject, signup } from './helpers/accounts.ts';
import { networkRequest, sessionStart } from './helpers/payloads.ts';
import { isUtf8 } from 'node:buffer';
import { neutraliseFormula } from '../src/domain/csv.ts';

// The low findings of the third probe at the edge: %00 in query strings, keys in query strings
// reaching the log, /metrics open on the app port, CSV cells that hide a formula behind an
// invisible prefix.
const { lines: logLines, stream } = logCapture();
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(
    { LOG_LEVEL: 'info', LOG_REQUESTS: 'true', METRICS_TOKEN, RATE_LIMIT_AUTH_PER_MIN: '1000' },
    tempDataDir(),
    { logger: { stream } },
  );
});
afterAll(async () => {
  await s?.close();
});

describe('the edge', () => {
  it('%00 in a dashboard or admin query string is a 400 {error}, not a 500', async () => {
    const a = await signup(s);
    const p = await dashboardProject(s, a);
    for (const url of [
      `/api/dashboard/projects/${p.projectId}/sessions?q=%00`,
      `/api/dashboard/projects/${p.projectId}/sessions?platform=ios%00x`,
      `/api/dashboard/projects/${p.projectId}/sessions?appVersion=%00`,
    ]) {
      const r = await s.app.inject({ method: 'GET', url, headers: a.headers });
      expect(r.statusCode, url).toBe(400);
      expect(r.json().error, url).toMatch(/NUL/);
    }
    const admin = await s.app.inject({ method: 'GET', url: '/api/users?email=a%00b@example.com', headers: s.admin });
    expect(admin.statusCode).toBe(400);
  });

  it('a key put in the query string is not written to the log', async () => {
    const p = await s.createProject();
    await s.app.inject({ method: 'GET', url: `/export/sessions?apiKey=${p.apiKey}&x=1`, headers: p.auth });
    await s.app.inject({ method: 'GET', url: `/export/sessions?api_key=${p.apiKey}`, headers: p.auth });
    await s.app.inject({ method: 'GET', url: `/export/sessions?whatever=${p.apiKey}`, headers: p.auth });
    await s.app.inject({ method: 'GET', url: `/nope/${p.apiKey}` });
    const log = logLines.join('');
    expect(log).toContain('apiKey=[redacted]');
    expect(log).not.toContain(p.apiKey.slice(4, 24));
  });

  it('/metrics needs METRICS_TOKEN when it is set', async () => {
    expect((await s.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    expect(
      (
        await s.app.inject({
          method: 'GET',
          url: '/metrics',
          headers: { authorization: 'Bearer wrong-token-0123456789abcd' },
        })
      ).statusCode,
    ).toBe(401);
    const ok = await s.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('# TYPE');
  });

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
