import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logCapture, startTestServer, tempDataDir, type TestServer } from '../helpers/server.ts';
import { signup } from '../helpers/accounts.ts';
import { sessionStart } from '../helpers/payloads.ts';

// Findings 7 and 8 of the security probe: headers, log lines, and errors classified by origin.
const { lines: logLines, stream } = logCapture();

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ LOG_LEVEL: 'info', LOG_REQUESTS: 'true' }, tempDataDir(), { logger: { stream } });
});
afterAll(async () => {
  await s?.close();
});

describe('headers', () => {
  it('nosniff everywhere; no-store on /api and /export answers; a CSP on /docs and the dashboard', async () => {
    const a = await signup(s);
    const p = await s.createProject();
    const me = await s.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: a.cookie } });
    expect(me.headers['cache-control']).toBe('no-store');
    const login = await s.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: a.email, password: 'wrong password!!' },
    });
    expect(login.headers['cache-control']).toBe('no-store');
    const projects = await s.app.inject({ method: 'GET', url: '/api/dashboard/projects', headers: a.headers });
    expect(projects.headers['cache-control']).toBe('no-store');
    const exp = await s.app.inject({ method: 'GET', url: '/export/sessions', headers: p.auth });
    expect(exp.headers['cache-control']).toBe('no-store');
    for (const r of [
      me,
      login,
      projects,
      exp,
      await s.app.inject({ method: 'GET', url: '/health' }),
      await s.app.inject({ method: 'GET', url: '/openapi.json' }),
      await s.app.inject({ method: 'GET', url: '/nope' }),
    ]) {
      expect(r.headers['x-content-type-options']).toBe('nosniff');
    }
    let docs = await s.app.inject({ method: 'GET', url: '/docs' });
    for (let i = 0; i < 3 && docs.statusCode === 302; i++) {
      const loc = String(docs.headers.location);
      docs = await s.app.inject({
        method: 'GET',
        url: loc.startsWith('/') ? loc : `/docs/${loc.replace(/^\.\//, '')}`,
      });
    }
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toMatch(/html/);
    expect(docs.headers['content-security-policy']).toMatch(/script-src 'self'/);
    expect(docs.headers['content-security-policy']).not.toMatch(/upgrade-insecure-requests/);
    expect(docs.headers['x-content-type-options']).toBe('nosniff');
    const web = await s.app.inject({ method: 'GET', url: '/' });
    expect(web.headers['content-security-policy']).toMatch(/default-src 'self'/);
  });
});

describe('log lines', () => {
  it('an email or a token in a query string is not logged', async () => {
    await s.app.inject({ method: 'GET', url: '/api/users?email=secret.person%40example.com', headers: s.admin });
    await s.app.inject({ method: 'GET', url: '/api/alert-recipients/confirm?token=abcdefghijklmnopqrstuvwxyz012345' });
    const all = logLines.join('');
    expect(all).toContain('/api/users?email=[redacted]');
    expect(all).not.toContain('secret.person');
    expect(all).not.toContain('abcdefghijklmnopqrstuvwxyz012345');
  });
});

describe('errors by origin', () => {
  it('a SyntaxError from our own code (a stored row that does not parse) is a logged 500, not "not valid JSON"', async () => {
    const p = await s.createProject();
    const ch = s.svc.stores.ch;
    const real = ch.query.bind(ch);
    ch.query = (async () => {
      throw new SyntaxError('Unexpected token } in JSON at position 7');
    }) as typeof ch.query;
    try {
      const r = await s.app.inject({ method: 'GET', url: '/export/network', headers: p.auth });
      expect(r.statusCode).toBe(500);
      expect(r.json()).toEqual({ error: 'Internal server error', code: 'internal_error' });
    } finally {
      ch.query = real;
    }
    expect(logLines.some((l) => l.includes('request failed') && l.includes('Unexpected token }'))).toBe(true);
  });

  it("another library's 4xx message is replaced by ours; the body parser's error stays a 400", async () => {
    const p = await s.createProject();
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: { ...p.auth, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: Buffer.from('not gzip at all'),
    });
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toBe('Request body could not be inflated: bad gzip or deflate data');
    const bad = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: { ...p.auth, 'content-type': 'application/json' },
      payload: '{"sessionId":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('Request body is not valid JSON');
    const ok = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: { ...p.auth, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: zlib.gzipSync(JSON.stringify(sessionStart())),
    });
    expect(ok.statusCode).toBe(201);
  });
});
