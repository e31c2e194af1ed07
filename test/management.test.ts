import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { startTestServer, ADMIN_TOKEN, type TestServer } from './helpers/server.ts';
import { sessionStart } from './helpers/payloads.ts';

const run = promisify(execFile);
let s: TestServer;
let url: string;

beforeAll(async () => {
  s = await startTestServer();
  url = await s.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await s?.close();
});

describe('management API', () => {
  it('refuses a missing or wrong admin token with 401', async () => {
    expect((await s.app.inject({ method: 'POST', url: '/api/projects', payload: { name: 'x' } })).statusCode).toBe(401);
    const wrong = await s.app.inject({ method: 'POST', url: '/api/projects', headers: { authorization: 'Bearer ' + ADMIN_TOKEN + 'x' }, payload: { name: 'x' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ error: expect.any(String) });
  });

  it('creates a project with its first key, shown once and stored hashed', async () => {
    const r = await s.app.inject({ method: 'POST', url: '/api/projects', headers: s.admin, payload: { name: 'Shop app' } });
    expect(r.statusCode).toBe(201);
    const body = r.json();
    expect(body.project).toEqual({ id: expect.any(String), name: 'Shop app', alertEmails: null, createdAt: expect.stringMatching(/Z$/) });
    expect(body.apiKey).toMatch(/^frk_[0-9A-Za-z]{38}$/);
    const stored = await s.svc.stores.pg.query<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE project_id = $1', [body.project.id]);
    expect(stored.rows).toHaveLength(1);
    expect(stored.rows[0]!.key_hash).not.toContain(body.apiKey);
    expect(stored.rows[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('validates bodies and ids: 400 for a missing name, 400 for a malformed id, 404 for an unknown project or key', async () => {
    expect((await s.app.inject({ method: 'POST', url: '/api/projects', headers: s.admin, payload: {} })).statusCode).toBe(400);
    expect((await s.app.inject({ method: 'POST', url: '/api/projects/not-a-uuid/keys', headers: s.admin })).statusCode).toBe(400);
    expect((await s.app.inject({ method: 'POST', url: `/api/projects/${randomUUID()}/keys`, headers: s.admin })).statusCode).toBe(404);
    expect((await s.app.inject({ method: 'POST', url: `/api/keys/${randomUUID()}/deactivate`, headers: s.admin })).statusCode).toBe(404);
  });

  it('sets and resets alert recipients', async () => {
    const { projectId } = await s.createProject();
    const r = await s.app.inject({ method: 'PATCH', url: `/api/projects/${projectId}`, headers: s.admin, payload: { alertEmails: ['oncall@example.com'] } });
    expect(r.statusCode).toBe(200);
    expect(r.json().alertEmails).toEqual(['oncall@example.com']);
    const bad = await s.app.inject({ method: 'PATCH', url: `/api/projects/${projectId}`, headers: s.admin, payload: { alertEmails: ['nope'] } });
    expect(bad.statusCode).toBe(422);
    const reset = await s.app.inject({ method: 'PATCH', url: `/api/projects/${projectId}`, headers: s.admin, payload: { alertEmails: null } });
    expect(reset.json().alertEmails).toBeNull();
  });

  it('keys of one project never reach another project (a key is scoped to one project)', async () => {
    const a = await s.createProject('a');
    const b = await s.createProject('b');
    const body = sessionStart();
    await s.app.inject({ method: 'POST', url: '/ingest/session', headers: a.auth, payload: body });
    const sid = body.sessionId;
    const r = await s.app.inject({ method: 'POST', url: '/ingest/events', headers: b.auth, payload: { sessionId: sid, events: [] } });
    expect(r.statusCode).toBe(404);
  });
});

describe('CLI', () => {
  const cli = (...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', '--url', url, '--token', ADMIN_TOKEN, ...args], { cwd: process.cwd() });

  it('creates a project and a key, and deactivates the key', async () => {
    const created = JSON.parse((await cli('projects', 'create', '--name', 'From CLI', '--json')).stdout);
    expect(created.project.name).toBe('From CLI');
    const key = JSON.parse((await cli('keys', 'create', '--project', created.project.id, '--json')).stdout);
    expect(key.apiKey).toMatch(/^frk_/);
    const auth = { authorization: `Bearer ${key.apiKey}` };
    expect((await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: sessionStart() })).statusCode).toBe(201);
    const out = await cli('keys', 'deactivate', key.key.id);
    expect(out.stdout).toContain('deactivated');
    expect((await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: sessionStart() })).statusCode).toBe(401);
  });

  it('prints the key once in human form, and fails with a message on a bad command', async () => {
    const out = await cli('projects', 'create', '--name', 'Human');
    expect(out.stdout).toMatch(/API key \(shown once, keep it\): frk_/);
    await expect(cli('projects', 'explode')).rejects.toMatchObject({ code: 2 });
    await expect(cli('keys', 'create', '--project', randomUUID())).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('404') });
  });
});
