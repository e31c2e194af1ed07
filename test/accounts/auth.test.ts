import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { PASSWORD, cookieFrom, signup } from '../helpers/accounts.ts';

let s: TestServer;
beforeAll(async () => {
  // A high auth limit: with REDIS_URL the per-IP counter is shared with other test files.
  s = await startTestServer({ RATE_LIMIT_AUTH_PER_MIN: '1000' });
});
afterAll(async () => {
  await s?.close();
});

const email = () => `Person.${randomUUID()}@Example.com`;

describe('/api/auth', () => {
  it('signs up: 201, the user, their own team, a session cookie and a CSRF token', async () => {
    const e = email();
    const r = await s.app.inject({
      method: 'POST',
      url: '/api/auth/signup',
      payload: { email: e, password: PASSWORD },
    });
    expect(r.statusCode).toBe(201);
    const body = r.json();
    expect(body.user.email).toBe(e.toLowerCase());
    expect(body.user).not.toHaveProperty('passwordHash');
    expect(body.teams).toHaveLength(1);
    expect(body.teams[0].role).toBe('owner');
    expect(typeof body.csrfToken).toBe('string');
    const setCookie = String(r.headers['set-cookie']);
    expect(setCookie).toMatch(/^flightrec_session=[\w-]{40,};/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).toContain('Path=/');
    // PUBLIC_URL is http in tests and the request is not https
    expect(setCookie).not.toContain('Secure');
  });

  it('stores the password as a scrypt hash and the session as a token hash only', async () => {
    const a = await signup(s);
    const u = await (await s.stores()).pg.query<{ password_hash: string }>(
      'SELECT password_hash FROM users WHERE id = $1',
      [a.userId],
    );
    expect(u.rows[0]!.password_hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(u.rows[0]!.password_hash).not.toContain(PASSWORD);
    const token = a.cookie.split('=')[1]!;
    const sess = await (await s.stores()).pg.query<{ token_hash: string }>(
      'SELECT token_hash FROM user_sessions WHERE user_id = $1',
      [a.userId],
    );
    expect(sess.rows).toHaveLength(1);
    expect(sess.rows[0]!.token_hash).not.toBe(token);
    expect(sess.rows[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a taken email (any case) with 409, a short password with 422, a bad email with 422', async () => {
    const a = await signup(s);
    const dup = await s.app.inject({
      method: 'POST',
      url: '/api/auth/signup',
      payload: { email: a.email.toUpperCase(), password: PASSWORD },
    });
    expect(dup.statusCode).toBe(409);
    const short = await s.app.inject({
      method: 'POST',
      url: '/api/auth/signup',
      payload: { email: email(), password: 'short' },
    });
    expect(short.statusCode).toBe(422);
    expect(short.json().details[0].path).toBe('/password');
    const bad = await s.app.inject({
      method: 'POST',
      url: '/api/auth/signup',
      payload: { email: 'not-an-email', password: PASSWORD },
    });
    expect(bad.statusCode).toBe(422);
    const missing = await s.app.inject({ method: 'POST', url: '/api/auth/signup', payload: { email: email() } });
    expect(missing.statusCode).toBe(400);
  });

  it('logs in, answers /me with the session, logs out and the cookie stops working', async () => {
    const a = await signup(s);
    const wrong = await s.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: a.email, password: 'wrong password!' },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ error: 'Invalid email or password', code: 'unauthorized' });
    const unknown = await s.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: email(), password: PASSWORD },
    });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toEqual(wrong.json());

    const login = await s.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: a.email.toUpperCase(), password: PASSWORD },
    });
    expect(login.statusCode).toBe(200);
    const cookie = cookieFrom(login.headers['set-cookie']);
    expect(cookie).not.toBe(a.cookie);
    const csrf = login.json().csrfToken;

    const me = await s.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie } });
    expect(me.statusCode).toBe(200);
    expect(me.json().user.id).toBe(a.userId);
    expect(me.json().csrfToken).toBe(csrf);

    const noCookie = await s.app.inject({ method: 'GET', url: '/api/auth/me' });
    expect(noCookie.statusCode).toBe(401);
    const forged = await s.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: { cookie: 'flightrec_session=forged' },
    });
    expect(forged.statusCode).toBe(401);

    const out = await s.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: { cookie, 'x-csrf-token': csrf },
    });
    expect(out.statusCode).toBe(200);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    const after = await s.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie } });
    expect(after.statusCode).toBe(401);
    // the sign-up session is a separate one and still works
    const other = await s.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: a.cookie } });
    expect(other.statusCode).toBe(200);
  });

  it('answers with the rate-limit headers', async () => {
    const r = await s.app.inject({ method: 'GET', url: '/api/auth/me' });
    expect(r.headers['ratelimit-limit']).toBe('1000');
    expect(Number(r.headers['ratelimit-remaining'])).toBeLessThan(1000);
    expect(Number(r.headers['ratelimit-reset'])).toBeGreaterThan(0);
  });
});

describe('CSRF', () => {
  it("refuses a state-changing dashboard request without the token, or with another session's token", async () => {
    const a = await signup(s);
    const b = await signup(s);
    const none = await s.app.inject({
      method: 'POST',
      url: '/api/dashboard/projects',
      headers: { cookie: a.cookie },
      payload: { name: 'x' },
    });
    expect(none.statusCode).toBe(403);
    expect(none.json().error).toMatch(/CSRF/);
    const crossed = await s.app.inject({
      method: 'POST',
      url: '/api/dashboard/projects',
      headers: { cookie: a.cookie, 'x-csrf-token': b.csrf },
      payload: { name: 'x' },
    });
    expect(crossed.statusCode).toBe(403);
    const projects = await s.app.inject({
      method: 'GET',
      url: '/api/dashboard/projects',
      headers: { cookie: a.cookie },
    });
    expect(projects.statusCode).toBe(200);
    expect(projects.json().data).toEqual([]);
    const ok = await s.app.inject({
      method: 'POST',
      url: '/api/dashboard/projects',
      headers: a.headers,
      payload: { name: 'x' },
    });
    expect(ok.statusCode).toBe(201);
  });

  it('refuses a request from another origin even with a valid token, and cross-site log-ins', async () => {
    const a = await signup(s);
    const evil = await s.app.inject({
      method: 'POST',
      url: '/api/dashboard/projects',
      headers: { ...a.headers, origin: 'https://evil.example' },
      payload: { name: 'x' },
    });
    expect(evil.statusCode).toBe(403);
    const crossSite = await s.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'sec-fetch-site': 'cross-site' },
      payload: { email: a.email, password: PASSWORD },
    });
    expect(crossSite.statusCode).toBe(403);
    const sameOrigin = await s.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { origin: 'http://localhost:3000', 'sec-fetch-site': 'same-origin' },
      payload: { email: a.email, password: PASSWORD },
    });
    expect(sameOrigin.statusCode).toBe(200);
  });

  it('refuses logout of a live session without the token', async () => {
    const a = await signup(s);
    const r = await s.app.inject({ method: 'POST', url: '/api/auth/logout', headers: { cookie: a.cookie } });
    expect(r.statusCode).toBe(403);
    const me = await s.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: a.cookie } });
    expect(me.statusCode).toBe(200);
  });
});
