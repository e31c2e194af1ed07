import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { startTestServer, ADMIN_TOKEN, type TestServer } from '../helpers/server.ts';
import { sessionStart } from '../helpers/payloads.ts';
import { signup } from '../helpers/accounts.ts';

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
    const wrong = await s.app.inject({
      method: 'POST',
      url: '/api/projects',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}x` },
      payload: { name: 'x' },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ error: expect.any(String), code: 'unauthorized' });
  });

  it('creates a project with its first key, shown once and stored hashed', async () => {
    const r = await s.app.inject({
      method: 'POST',
      url: '/api/projects',
      headers: s.admin,
      payload: { name: 'Shop app' },
    });
    expect(r.statusCode).toBe(201);
    const body = r.json();
    expect(body.project).toEqual({
      id: expect.any(String),
      name: 'Shop app',
      alertEmails: null,
      createdAt: expect.stringMatching(/Z$/),
      teamId: null,
      allowedOrigins: null,
      inAppPackages: [],
    });
    expect(body.apiKey).toMatch(/^frk_[0-9A-Za-z]{38}$/);
    const stored = await (await s.stores()).pg.query<{ key_hash: string }>(
      'SELECT key_hash FROM api_keys WHERE project_id = $1',
      [body.project.id],
    );
    expect(stored.rows).toHaveLength(1);
    expect(stored.rows[0]!.key_hash).not.toContain(body.apiKey);
    expect(stored.rows[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('validates bodies and ids: 400 for a missing name, 400 for a malformed id, 404 for an unknown project or key', async () => {
    expect(
      (await s.app.inject({ method: 'POST', url: '/api/projects', headers: s.admin, payload: {} })).statusCode,
    ).toBe(400);
    expect(
      (await s.app.inject({ method: 'POST', url: '/api/projects/not-a-uuid/keys', headers: s.admin })).statusCode,
    ).toBe(400);
    expect(
      (await s.app.inject({ method: 'POST', url: `/api/projects/${randomUUID()}/keys`, headers: s.admin })).statusCode,
    ).toBe(404);
    expect(
      (await s.app.inject({ method: 'POST', url: `/api/keys/${randomUUID()}/deactivate`, headers: s.admin }))
        .statusCode,
    ).toBe(404);
  });

  it('sets and resets alert recipients', async () => {
    const { projectId } = await s.createProject();
    const r = await s.app.inject({
      method: 'PATCH',
      url: `/api/projects/${projectId}`,
      headers: s.admin,
      payload: { alertEmails: ['oncall@example.com'] },
    });
    expect(r.statusCode).toBe(200);
    expect(r.json().alertEmails).toEqual(['oncall@example.com']);
    const bad = await s.app.inject({
      method: 'PATCH',
      url: `/api/projects/${projectId}`,
      headers: s.admin,
      payload: { alertEmails: ['nope'] },
    });
    expect(bad.statusCode).toBe(422);
    const reset = await s.app.inject({
      method: 'PATCH',
      url: `/api/projects/${projectId}`,
      headers: s.admin,
      payload: { alertEmails: null },
    });
    expect(reset.json().alertEmails).toBeNull();
  });

  it('renames a project and gives it to a team (by id or by its owner), so that team sees it in the dashboard', async () => {
    const { projectId } = await s.createProject('Made by the operator');
    const patch = (payload: object) =>
      s.app.inject({ method: 'PATCH', url: `/api/projects/${projectId}`, headers: s.admin, payload });
    expect((await patch({ name: 'Shop Android' })).json()).toMatchObject({ name: 'Shop Android', teamId: null });
    expect((await patch({})).statusCode).toBe(422);
    expect((await patch({ name: '   ' })).statusCode).toBe(422);

    const alice = await signup(s);
    const seen = () =>
      s.app.inject({ method: 'GET', url: `/api/dashboard/projects/${projectId}/sessions`, headers: alice.headers });
    expect((await seen()).statusCode).toBe(404);
    expect((await patch({ teamOwnerEmail: alice.email.toUpperCase() })).json()).toMatchObject({
      teamId: alice.teamId,
      name: 'Shop Android',
    });
    expect((await seen()).statusCode).toBe(200);
    expect((await patch({ teamId: null })).json().teamId).toBeNull();
    expect((await patch({ teamId: alice.teamId })).json().teamId).toBe(alice.teamId);
    expect((await patch({ teamId: randomUUID() })).json()).toEqual({ error: 'Team not found', code: 'not_found' });
    expect((await patch({ teamOwnerEmail: 'nobody@example.com' })).statusCode).toBe(404);
    expect(
      (
        await s.app.inject({
          method: 'PATCH',
          url: `/api/projects/${randomUUID()}`,
          headers: s.admin,
          payload: { name: 'x' },
        })
      ).statusCode,
    ).toBe(404);
  });

  it('keys of one project never reach another project (a key is scoped to one project)', async () => {
    const a = await s.createProject('a');
    const b = await s.createProject('b');
    const body = sessionStart();
    await s.app.inject({ method: 'POST', url: '/ingest/session', headers: a.auth, payload: body });
    const sid = body.sessionId;
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/events',
      headers: b.auth,
      payload: { sessionId: sid, events: [] },
    });
    expect(r.statusCode).toBe(404);
  });
});

describe('CLI', () => {
  const cli = (...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', '--url', url, '--token', ADMIN_TOKEN, ...args], {
      cwd: process.cwd(),
    });

  it('creates a project and a key, and deactivates the key', async () => {
    const created = JSON.parse((await cli('projects', 'create', '--name', 'From CLI', '--json')).stdout);
    expect(created.project.name).toBe('From CLI');
    const key = JSON.parse((await cli('keys', 'create', '--project', created.project.id, '--json')).stdout);
    expect(key.apiKey).toMatch(/^frk_/);
    const auth = { authorization: `Bearer ${key.apiKey}` };
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: sessionStart() }))
        .statusCode,
    ).toBe(201);
    const out = await cli('keys', 'deactivate', key.key.id);
    expect(out.stdout).toContain('deactivated');
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: sessionStart() }))
        .statusCode,
    ).toBe(401);
  });

  it('creates a project for a team, names keys, and prints what a 422 found wrong', async () => {
    const owner = await signup(s);
    const out = await cli('projects', 'create', '--name', 'Team app', '--owner', owner.email);
    expect(out.stdout).not.toContain('belongs to no team');
    const listed = (
      await s.app.inject({ method: 'GET', url: '/api/dashboard/projects', headers: owner.headers })
    ).json().data;
    expect(listed.map((p: { name: string }) => p.name)).toEqual(['Team app']);
    const projectId = listed[0].id as string;

    const key = await cli('keys', 'create', '--project', projectId, '--name', 'CI export');
    expect(key.stdout).toMatch(/^Key frk_[0-9A-Za-z]{4}… "CI export"/);
    expect((await cli('projects', 'rename', '--project', projectId, '--name', 'Team app (iOS)')).stdout).toContain(
      'Project Team app (iOS)',
    );

    const orphan = await cli('projects', 'create', '--name', 'Orphan');
    expect(orphan.stdout).toContain('belongs to no team');
    const orphanId = /\(([0-9a-f-]{36})\)/.exec(orphan.stdout)![1]!;
    expect((await cli('projects', 'set-team', '--project', orphanId, '--team', owner.teamId)).stdout).toContain(
      `team ${owner.teamId}`,
    );

    const bad = await cli('projects', 'set-alert-emails', '--project', projectId, '--emails', 'not-an-email').catch(
      (e) => e,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Error 422: Validation failed');
    expect(bad.stderr).toContain('alertEmails.0: must be an email address');
  });

  it('prints the key once in human form, and fails with a message on a bad command', async () => {
    const out = await cli('projects', 'create', '--name', 'Human');
    expect(out.stdout).toMatch(/API key \(shown once, keep it\): frk_/);
    await expect(cli('projects', 'explode')).rejects.toMatchObject({ code: 2 });
    await expect(cli('keys', 'create', '--project', randomUUID())).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('404'),
    });
  });
});
