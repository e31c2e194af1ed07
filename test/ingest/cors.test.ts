import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';

const run = promisify(execFile);

// CORS on /ingest only: a browser app on another origin can send (preflight answered before the
// key check, every answer readable, errors included), /export, /api and the dashboard never
// answer a page of another origin; a project may narrow /ingest to a list of origins.
describe('CORS on /ingest', () => {
  let s: TestServer;
  let projectId: string;
  let auth: { authorization: string };
  const APP = 'https://app.example.com';

  beforeAll(async () => {
    // Key cache off: an origin list change is seen by the next request.
    s = await startTestServer({ KEY_CACHE_TTL_MS: '0', RATE_LIMIT_INGEST_PER_MIN: '40' });
    ({ projectId, auth } = await s.createProject('cors'));
  });
  afterAll(async () => {
    await s?.close();
  });

  const session = () => ({ sessionId: randomUUID(), device: { platform: 'linux' }, startedAt: Date.now() });

  it('answers the preflight of every ingest route for any origin, with no key and no body', async () => {
    for (const path of [
      '/ingest/session',
      '/ingest/session/end',
      '/ingest/events',
      '/ingest/crash',
      '/ingest/network',
    ]) {
      const r = await s.app.inject({
        method: 'OPTIONS',
        url: path,
        headers: {
          origin: APP,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type,content-encoding',
        },
      });
      expect(r.statusCode, path).toBe(204);
      expect(r.headers['access-control-allow-origin']).toBe(APP);
      expect(r.headers['access-control-allow-methods']).toBe('POST');
      expect(String(r.headers['access-control-allow-headers'])).toMatch(/authorization/);
      expect(String(r.headers['access-control-allow-headers'])).toMatch(/content-encoding/);
      expect(Number(r.headers['access-control-max-age'])).toBeGreaterThan(0);
    }
  });

  it('never answers a preflight or a request of another origin on /export, /api or the dashboard', async () => {
    for (const url of [
      '/export/sessions',
      `/api/projects/${projectId}`,
      '/api/dashboard/projects',
      '/',
      '/ingest/unknown',
    ]) {
      const pre = await s.app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: APP, 'access-control-request-method': 'GET' },
      });
      expect(pre.headers['access-control-allow-origin'], url).toBeUndefined();
      expect(pre.statusCode, url).toBeGreaterThanOrEqual(400);
    }
    const exp = await s.app.inject({ method: 'GET', url: '/export/sessions', headers: { ...auth, origin: APP } });
    expect(exp.statusCode).toBe(200);
    expect(exp.headers['access-control-allow-origin']).toBeUndefined();
    const api = await s.app.inject({
      method: 'GET',
      url: `/api/projects/${projectId}`,
      headers: { ...s.admin, origin: APP },
    });
    expect(api.statusCode).toBe(200);
    expect(api.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('makes every ingest answer readable by the page: 201, 400, 401, 404, 422 and 429, with the rate-limit headers exposed', async () => {
    const h = { ...auth, origin: APP };
    const ok = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: h, payload: session() });
    expect(ok.statusCode).toBe(201);
    expect(ok.headers['access-control-allow-origin']).toBe(APP);
    expect(String(ok.headers['access-control-expose-headers'])).toMatch(/RateLimit-Remaining.*Retry-After/);
    expect(String(ok.headers.vary)).toMatch(/Origin/);

    const noKey = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: { origin: APP, authorization: 'Bearer frk_nope' },
      payload: session(),
    });
    expect(noKey.statusCode).toBe(401);
    expect(noKey.headers['access-control-allow-origin']).toBe(APP);

    const unknown = await s.app.inject({
      method: 'POST',
      url: '/ingest/events',
      headers: h,
      payload: { sessionId: randomUUID(), events: [] },
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['access-control-allow-origin']).toBe(APP);

    const missing = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: h,
      payload: { sessionId: 'x' },
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.headers['access-control-allow-origin']).toBe(APP);
    const bad = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: h,
      payload: { ...session(), startedAt: -5 },
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.headers['access-control-allow-origin']).toBe(APP);

    let limited: LightMyRequestResponse | undefined;
    for (let i = 0; i < 50 && !limited; i++) {
      const r = await s.app.inject({
        method: 'POST',
        url: '/ingest/session/end',
        headers: h,
        payload: { sessionId: randomUUID(), endedAt: Date.now() },
      });
      if (r.statusCode === 429) limited = r;
    }
    expect(limited?.headers['access-control-allow-origin']).toBe(APP);
    expect(limited?.headers['retry-after']).toBeDefined();
  });

  it("a project's allowedOrigins: validated and normalised, enforced on the request (403, nothing stored), requests without Origin unaffected", async () => {
    // Its own project: the rate limit above is per key.
    const p = await s.createProject('cors list');
    const invalid = await s.app.inject({
      method: 'PATCH',
      url: `/api/projects/${p.projectId}`,
      headers: s.admin,
      payload: { allowedOrigins: ['https://ok.example', 'not an origin', 'https://x.example/path'] },
    });
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json().details.map((d: { path: string }) => d.path)).toEqual([
      '/allowedOrigins/1',
      '/allowedOrigins/2',
    ]);

    const set = await s.app.inject({
      method: 'PATCH',
      url: `/api/projects/${p.projectId}`,
      headers: s.admin,
      payload: { allowedOrigins: ['HTTPS://App.Example.com:443/', 'http://localhost:5173'] },
    });
    expect(set.statusCode).toBe(200);
    expect(set.json().allowedOrigins).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(
      (await s.app.inject({ method: 'GET', url: `/api/projects/${p.projectId}`, headers: s.admin })).json()
        .allowedOrigins,
    ).toEqual(['https://app.example.com', 'http://localhost:5173']);

    const other = session();
    const refused = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: { ...p.auth, origin: 'https://evil.example' },
      payload: other,
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    const listed = session();
    const ok = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: { ...p.auth, origin: APP },
      payload: listed,
    });
    expect(ok.statusCode).toBe(201);
    expect(ok.headers['access-control-allow-origin']).toBe(APP);
    const native = session();
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: native })).statusCode,
    ).toBe(201);

    const stored = (await s.app.inject({ method: 'GET', url: '/export/sessions?limit=1000', headers: p.auth }))
      .json()
      .data.map((x: { id: string }) => x.id);
    expect(stored).toContain(listed.sessionId);
    expect(stored).toContain(native.sessionId);
    expect(stored).not.toContain(other.sessionId);

    // null: any origin again.
    expect(
      (
        await s.app.inject({
          method: 'PATCH',
          url: `/api/projects/${p.projectId}`,
          headers: s.admin,
          payload: { allowedOrigins: null },
        })
      ).json().allowedOrigins,
    ).toBeNull();
    const again = await s.app.inject({
      method: 'POST',
      url: '/ingest/session',
      headers: { ...p.auth, origin: 'https://evil.example' },
      payload: session(),
    });
    expect(again.statusCode).toBe(201);
    expect(again.headers['access-control-allow-origin']).toBe('https://evil.example');

    // []: no browser page at all, apps without Origin still send.
    await s.app.inject({
      method: 'PATCH',
      url: `/api/projects/${p.projectId}`,
      headers: s.admin,
      payload: { allowedOrigins: [] },
    });
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: '/ingest/session',
          headers: { ...p.auth, origin: APP },
          payload: session(),
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: session() })).statusCode,
    ).toBe(201);
  });

  it('the CLI sets the list (projects set-origins): a list, none, or any again', async () => {
    const url = await s.app.listen({ port: 0, host: '127.0.0.1' });
    const cli = async (...args: string[]) =>
      JSON.parse(
        (
          await run(process.execPath, [
            '--import',
            'tsx',
            'src/cli/main.ts',
            '--url',
            url,
            '--token',
            ADMIN_TOKEN,
            '--json',
            ...args,
          ])
        ).stdout,
      );
    const p = await s.createProject('cors cli');
    expect(
      (
        await cli(
          'projects',
          'set-origins',
          '--project',
          p.projectId,
          '--origins',
          'https://App.example.com, http://localhost:5173',
        )
      ).allowedOrigins,
    ).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(
      (await cli('projects', 'set-origins', '--project', p.projectId, '--origins', 'none')).allowedOrigins,
    ).toEqual([]);
    expect((await cli('projects', 'set-origins', '--project', p.projectId, '--origins', '')).allowedOrigins).toBeNull();
  }, 30_000);
});
