import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logCapture, startTestServer, tempDataDir, type TestServer } from '../helpers/server.ts';
import { dashboardProject, signup } from '../helpers/accounts.ts';

// Query strings at the edge: %00 is refused, keys in them never reach the log; /metrics on the
// app port needs its token.
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
});
