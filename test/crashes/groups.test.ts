import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';
import { crash, sessionStart, T0 } from '../helpers/payloads.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ RUN_WORKER: 'false' });
});
afterAll(async () => {
  await s?.close();
});

type Auth = { authorization: string };

async function session(auth: Auth, appVersion: string): Promise<string> {
  const st = sessionStart();
  st.device.appVersion = appVersion;
  const r = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: st });
  expect(r.statusCode).toBe(201);
  return st.sessionId;
}

let ts = T0 + 100_000;
async function occur(auth: Auth, sessionId: string, stackTrace: string) {
  const r = await s.app.inject({
    method: 'POST',
    url: '/ingest/crash',
    headers: auth,
    payload: crash(sessionId, { stackTrace, timestamp: ts++ }),
  });
  expect(r.statusCode).toBe(201);
}

/** A project and one crash group seen in app version 1.0. */
async function group() {
  const p = await s.createProject();
  const stackTrace = `at ${randomUUID()} (a.js:1:1)\nat b (b.js:2:2)`;
  const sid = await session(p.auth, '1.0');
  await occur(p.auth, sid, stackTrace);
  const r = await (await s.stores()).pg.query<{ id: string }>('SELECT id FROM crash_groups WHERE project_id = $1', [
    p.projectId,
  ]);
  const groupId = r.rows[0]!.id;
  const url = `/api/projects/${p.projectId}/crash-groups/${groupId}`;
  return { ...p, stackTrace, groupId, url };
}

const patch = (url: string, payload: unknown, headers = s.admin) =>
  s.app.inject({ method: 'PATCH', url, headers, payload: payload as object });
const get = async (url: string) => (await s.app.inject({ method: 'GET', url, headers: s.admin })).json();

describe('crash-group workflow', () => {
  it('GET shows the group with its export fields, versions and summary', async () => {
    const g = await group();
    const r = await s.app.inject({ method: 'GET', url: g.url, headers: s.admin });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({
      id: g.groupId,
      status: 'open',
      message: 'TypeError: undefined is not a function',
      isFatal: true,
      handled: false,
      occurrenceCount: 1,
      affectedDevices: 1,
      platform: 'ios',
      appVersion: '1.0',
      osVersion: '17.2',
      firstSeenAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      appVersions: ['1.0'],
      resolvedVersions: [],
      summary: null,
      summarySource: null,
      alert: { status: 'pending', attempts: 0 },
    });
  });

  it('takes any manual move: open → resolved directly, ignored → acknowledged, and back', async () => {
    const g = await group();
    for (const status of ['resolved', 'open', 'ignored', 'acknowledged', 'ignored', 'resolved'] as const) {
      const r = await patch(g.url, { status });
      expect(r.statusCode, `→ ${status}`).toBe(200);
      expect(r.json()).toMatchObject({ id: g.groupId, status });
    }
    expect((await get(g.url)).status).toBe('resolved');
  });

  it('setting the current status again is a no-op 200', async () => {
    const g = await group();
    const r = await patch(g.url, { status: 'open' });
    expect(r.statusCode).toBe(200);
    expect(r.json().status).toBe('open');
  });

  it('answers 422 for an unknown status, 400 without one, 404 for unknown ids, 401 without the token', async () => {
    const g = await group();
    const bad = await patch(g.url, { status: 'fixed' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({ error: 'Validation failed', details: [{ path: '/status' }] });
    expect((await patch(g.url, { status: 7 })).statusCode).toBe(422);
    expect((await patch(g.url, {})).statusCode).toBe(400);

    const noGroup = await patch(`/api/projects/${g.projectId}/crash-groups/${randomUUID()}`, {
      status: 'acknowledged',
    });
    expect(noGroup.statusCode).toBe(404);
    expect(noGroup.json()).toEqual({ error: 'Crash group not found', code: 'not_found' });
    const noProject = await s.app.inject({
      method: 'GET',
      url: `/api/projects/${randomUUID()}/crash-groups/${g.groupId}`,
      headers: s.admin,
    });
    expect(noProject.statusCode).toBe(404);
    expect(noProject.json()).toEqual({ error: 'Project not found', code: 'project_not_found' });
    // Another project's group is not found through this project.
    const other = await s.createProject();
    const cross = await patch(`/api/projects/${other.projectId}/crash-groups/${g.groupId}`, { status: 'ignored' });
    expect(cross.statusCode).toBe(404);
    expect((await get(g.url)).status).toBe('open');

    expect((await patch(g.url, { status: 'ignored' }, { authorization: 'Bearer nope' })).statusCode).toBe(401);
    expect((await patch(g.url, { status: 'ignored' }, g.auth)).statusCode).toBe(401); // a project API key is not the admin token
    expect(
      (
        await s.app.inject({
          method: 'GET',
          url: `/api/projects/not-a-uuid/crash-groups/${g.groupId}`,
          headers: s.admin,
        })
      ).statusCode,
    ).toBe(400);
  });

  it('regression rule: resolved at 1.0, a new 1.0 occurrence stays resolved, a 1.1 occurrence reopens', async () => {
    const g = await group();
    const resolved = await patch(g.url, { status: 'resolved' });
    expect(resolved.json()).toMatchObject({ status: 'resolved', resolvedVersions: ['1.0'], appVersions: ['1.0'] });

    await occur(g.auth, await session(g.auth, '1.0'), g.stackTrace);
    expect(await get(g.url)).toMatchObject({ status: 'resolved', occurrenceCount: 2, appVersions: ['1.0'] });

    await occur(g.auth, await session(g.auth, '1.1'), g.stackTrace);
    expect(await get(g.url)).toMatchObject({
      status: 'open',
      occurrenceCount: 3,
      appVersions: ['1.0', '1.1'],
      appVersion: '1.1',
    });

    // Resolving again takes in 1.1: now only a third version reopens it.
    expect((await patch(g.url, { status: 'resolved' })).json().resolvedVersions).toEqual(['1.0', '1.1']);
    await occur(g.auth, await session(g.auth, '1.1'), g.stackTrace);
    expect((await get(g.url)).status).toBe('resolved');
    await occur(g.auth, await session(g.auth, '1.2'), g.stackTrace);
    expect((await get(g.url)).status).toBe('open');
  });

  it('ignored and acknowledged groups stay as they are on new versions', async () => {
    const a = await group();
    await patch(a.url, { status: 'acknowledged' });
    await occur(a.auth, await session(a.auth, '2.0'), a.stackTrace);
    expect((await get(a.url)).status).toBe('acknowledged');
    const i = await group();
    await patch(i.url, { status: 'ignored' });
    await occur(i.auth, await session(i.auth, '2.0'), i.stackTrace);
    expect(await get(i.url)).toMatchObject({ status: 'ignored', appVersions: ['1.0', '2.0'] });
  });

  it('the CLI sets and shows a status through the API', async () => {
    const g = await group();
    const address = await s.app.listen({ host: '127.0.0.1', port: 0 });
    const cli = (...args: string[]) =>
      promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'src/cli/main.ts', ...args, '--url', address, '--token', ADMIN_TOKEN],
        { cwd: process.cwd() },
      );
    const set = await cli(
      'crash-groups',
      'set-status',
      '--project',
      g.projectId,
      '--group',
      g.groupId,
      '--status',
      'acknowledged',
      '--json',
    );
    expect(JSON.parse(set.stdout)).toMatchObject({ id: g.groupId, status: 'acknowledged' });
    const shown = await cli('crash-groups', 'get', '--project', g.projectId, '--group', g.groupId, '--json');
    expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'acknowledged', appVersions: ['1.0'] });
    const refused = await cli(
      'crash-groups',
      'set-status',
      '--project',
      g.projectId,
      '--group',
      g.groupId,
      '--status',
      'fixed',
    ).catch((e) => e);
    expect(refused.code).toBe(1);
    // the details, in words, not a bare "Validation failed"
    expect(refused.stderr).toContain('Error 422: Validation failed');
    expect(refused.stderr).toContain('status: must be one of open, acknowledged, resolved, ignored');
  });
});
