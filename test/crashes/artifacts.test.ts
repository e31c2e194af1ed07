import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';
import { sessionStart, T0 } from '../helpers/payloads.ts';
import { MAPPING, release } from '../helpers/bundle.ts';

// Upload API, its keys, and crashes of a release grouped and shown on the symbolicated stack,
// over the real HTTP stack and stores.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({
    RUN_WORKER: 'false',
    ARTIFACT_MAX_BYTES: String(200_000),
    ARTIFACT_PROJECT_MAX_BYTES: String(400_000),
  });
});
afterAll(async () => {
  await s?.close();
});

type Auth = { authorization: string };
const bearer = (k: string): Auth => ({ authorization: `Bearer ${k}` });

async function key(projectId: string, scopes: string[] | undefined): Promise<Auth> {
  const r = await s.app.inject({
    method: 'POST',
    url: `/api/projects/${projectId}/keys`,
    headers: s.admin,
    payload: scopes ? { scopes } : {},
  });
  expect(r.statusCode).toBe(201);
  return bearer(r.json().apiKey);
}

const upload = (
  projectId: string,
  rel: string,
  name: string,
  body: string | Buffer,
  headers: Record<string, string>,
  kind?: string,
) =>
  s.app.inject({
    method: 'POST',
    url: `/api/projects/${projectId}/releases/${encodeURIComponent(rel)}/artifacts?name=${encodeURIComponent(name)}${kind ? `&kind=${kind}` : ''}`,
    headers: { ...headers, 'content-type': 'application/octet-stream' },
    payload: body,
  });

async function crashIn(
  auth: Auth,
  appVersion: string,
  build: string,
  stackTrace: string,
  message: string,
  platform = 'linux',
) {
  const st = sessionStart();
  st.device = { ...st.device, appVersion, appBuildNumber: build, platform };
  expect((await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: st })).statusCode).toBe(
    201,
  );
  const r = await s.app.inject({
    method: 'POST',
    url: '/ingest/crash',
    headers: auth,
    payload: { sessionId: st.sessionId, message, stackTrace, isFatal: true, handled: false, timestamp: T0 + 5_000 },
  });
  expect(r.body).toBe('{"ok":true}');
  return st.sessionId;
}

async function groups(projectId: string) {
  const r = await (await s.stores()).pg.query<{ id: string; message: string; stack_head: string }>(
    'SELECT id, message, stack_head FROM crash_groups WHERE project_id = $1',
    [projectId],
  );
  return r.rows;
}

describe('artifact uploads: who may', () => {
  it("a key with the upload scope, the admin token; never an ingest-only or default key, nor another project's", async () => {
    const p = await s.createProject();
    const other = await s.createProject();
    const map = release('https://a/x.js', 'aaaaaa1').map;
    const ingestOnly = await key(p.projectId, ['ingest']);
    expect((await upload(p.projectId, '1.0.0', 'x.js.map', map, ingestOnly)).statusCode).toBe(403);
    // the project's first key and a key created without scopes: ingest + export, no upload
    expect((await upload(p.projectId, '1.0.0', 'x.js.map', map, p.auth)).statusCode).toBe(403);
    expect((await upload(p.projectId, '1.0.0', 'x.js.map', map, await key(p.projectId, undefined))).statusCode).toBe(
      403,
    );
    const ci = await key(p.projectId, ['upload']);
    const r = await upload(p.projectId, '1.0.0', 'x.js.map', map, ci);
    expect(r.statusCode).toBe(201);
    expect(r.json()).toMatchObject({
      artifact: { release: '1.0.0', kind: 'sourcemap', name: 'x.js.map', size: Buffer.byteLength(map) },
      replaced: false,
    });
    expect((await upload(p.projectId, '1.0.0', 'x.js.map', map, s.admin)).json()).toMatchObject({ replaced: true });
    expect((await upload(other.projectId, '1.0.0', 'x.js.map', map, ci)).statusCode).toBe(403);
    expect((await upload(p.projectId, '1.0.0', 'x.js.map', map, bearer('nonsense'))).statusCode).toBe(401);
    // the upload key ingests nothing
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: ci, payload: sessionStart() })).statusCode,
    ).toBe(403);
    const list = await s.app.inject({
      method: 'GET',
      url: `/api/projects/${p.projectId}/releases/1.0.0/artifacts`,
      headers: ci,
    });
    expect(list.json().data).toHaveLength(1);
  });

  it('bad input is a clear error that stores nothing: not a map, not a mapping, too large, a bad release, over the project cap', async () => {
    const p = await s.createProject();
    const ci = await key(p.projectId, ['upload']);
    const bad = await upload(p.projectId, '1.0.0', 'x.js.map', '{"version":2}', ci);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().details[0].message).toContain('not a source map');
    expect((await upload(p.projectId, '1.0.0', 'mapping.txt', 'hello', ci)).statusCode).toBe(422);
    expect((await upload(p.projectId, '1.0.0', 'x.js', Buffer.alloc(300_000, 'a'), ci)).statusCode).toBe(413);
    expect((await upload(p.projectId, 'a/b', 'x.js', 'x', ci)).statusCode).toBe(400);
    expect((await upload(p.projectId, '1 0', 'x.js', 'x', ci)).statusCode).toBe(400);
    expect((await upload(p.projectId, '1.0.0', 'x.js', '', ci)).statusCode).toBe(422);
    const big = Buffer.alloc(150_000, 'a');
    expect((await upload(p.projectId, '1.0.0', 'a.js', big, ci)).statusCode).toBe(201);
    expect((await upload(p.projectId, '1.0.0', 'b.js', big, ci)).statusCode).toBe(201);
    const over = await upload(p.projectId, '1.0.0', 'c.js', big, ci);
    expect(over.statusCode).toBe(413);
    expect(over.json().error).toContain('ARTIFACT_PROJECT_MAX_BYTES');
    // replacing one counts it once
    expect((await upload(p.projectId, '1.0.0', 'b.js', big, ci)).statusCode).toBe(201);
    const del = await s.app.inject({
      method: 'DELETE',
      url: `/api/projects/${p.projectId}/releases/1.0.0/artifacts?name=a.js`,
      headers: ci,
    });
    expect(del.json()).toEqual({ deleted: 1 });
    expect((await upload(p.projectId, '1.0.0', 'c.js', big, ci)).statusCode).toBe(201);
    // a gzip'd body (as the CLI sends it) is inflated before the limits apply
    const gz = await s.app.inject({
      method: 'POST',
      url: `/api/projects/${p.projectId}/releases/2.0.0/artifacts?name=g.js`,
      headers: { ...ci, 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' },
      payload: zlib.gzipSync(Buffer.alloc(300_000, 'b')),
    });
    expect(gz.statusCode).toBe(413);
  });
});

describe('crashes of a release with artifacts', () => {
  it('a minified browser crash is grouped and shown on the original stack; a rebuilt bundle stays one group', async () => {
    const p = await s.createProject();
    const ci = await key(p.projectId, ['upload']);
    const a = release('https://shop.example.com/assets/index-8f3a2c.js', '8f3a2c');
    const b = release('https://shop.example.com/assets/index-b71d09.js', 'b71d09');
    const up = await upload(p.projectId, '3.1.0', '~/assets/index-8f3a2c.js.map', a.map, ci);
    expect(up.statusCode).toBe(201);
    expect((await upload(p.projectId, '3.1.0+2', '~/assets/index-b71d09.js.map', b.map, ci)).statusCode).toBe(201);
    await crashIn(p.auth, '3.1.0', '1', a.stack, 'Error: Order 1042 not found');
    await crashIn(p.auth, '3.1.0', '2', b.stack, 'Error: Order 7 not found');
    const g = await groups(p.projectId);
    expect(g).toHaveLength(1);
    expect(g[0]!.stack_head).toContain('at findOrder (src/orders.ts:6:');

    const occ = await (await s.stores()).ch.query<{ stack_trace: string; symbolicated_stack: string }>(
      'SELECT stack_trace, symbolicated_stack FROM crash_occurrences WHERE project_id = {p:String}',
      { p: p.projectId },
    );
    expect(occ.map((o) => o.stack_trace).sort()).toEqual([a.stack, b.stack].sort());
    expect(occ.every((o) => o.symbolicated_stack.includes('src/orders.ts'))).toBe(true);

    const view = await s.app.inject({
      method: 'GET',
      url: `/api/projects/${p.projectId}/crash-groups/${g[0]!.id}`,
      headers: s.admin,
    });
    expect(view.json()).toMatchObject({ occurrenceCount: 2, stackHead: expect.stringContaining('src/orders.ts') });
  });

  it("an obfuscated Android crash is retraced with the release's mapping.txt, message included", async () => {
    const p = await s.createProject();
    const ci = await key(p.projectId, ['upload']);
    expect((await upload(p.projectId, '5.0.0+42', 'mapping.txt', MAPPING, ci)).json()).toMatchObject({
      artifact: { kind: 'proguard' },
    });
    const stack = 'c.a.d: Order 1042 not found\n\tat c.a.b.a(SourceFile:4)\n\tat c.a.b.b(SourceFile:6)';
    await crashIn(p.auth, '5.0.0', '42', stack, 'c.a.d: Order 1042 not found', 'android');
    // another build of the version has no mapping: its stack stays as sent
    await crashIn(p.auth, '5.0.0', '43', stack, 'c.a.d: Order 1042 not found', 'android');
    const g = (await groups(p.projectId)).sort((x, y) => x.message.localeCompare(y.message));
    expect(g.map((x) => x.message)).toEqual([
      'c.a.d: Order 1042 not found',
      'com.shop.orders.OrderNotFoundException: Order 1042 not found',
    ]);
    expect(g[1]!.stack_head).toContain('at com.shop.util.Checks.requireFound(Checks.kt:12)');
  });

  it('a mapping uploaded after the crash re-symbolicates the crash page; the group does not move', async () => {
    const p = await s.createProject();
    const ci = await key(p.projectId, ['upload']);
    const a = release('https://shop.example.com/assets/index-c0ffee1.js', 'c0ffee1');
    await crashIn(p.auth, '4.0.0', '9', a.stack, 'Error: Order 1042 not found');
    const [g] = await groups(p.projectId);
    const teamUser = await s.app.inject({
      method: 'GET',
      url: `/api/projects/${p.projectId}/crash-groups/${g!.id}`,
      headers: s.admin,
    });
    expect(teamUser.json().stackHead).toContain('index-c0ffee1.js');
    expect((await upload(p.projectId, '4.0.0', '~/assets/index-c0ffee1.js.map', a.map, ci)).statusCode).toBe(201);
    const page = await s.svc.dashboard.crashGroup(p.projectId, g!.id);
    expect(page.latest?.stackTrace).toBe(a.stack);
    expect(page.latest?.symbolicatedStack).toContain('at findOrder (src/orders.ts:6:');
    expect((await groups(p.projectId))[0]).toEqual(g);
  });
});

describe('a retried crash and artifacts uploaded in between', () => {
  it('the retry stays the one occurrence of the group its first try opened', async () => {
    const p = await s.createProject();
    const ci = await key(p.projectId, ['upload']);
    const a = release('https://shop.example.com/assets/index-d00d1e.js', 'd00d1e');
    const st = sessionStart();
    st.device = { ...st.device, appVersion: '6.0.0', appBuildNumber: '1' };
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st })).statusCode,
    ).toBe(201);
    const crash = {
      sessionId: st.sessionId,
      message: 'Error: Order 1042 not found',
      stackTrace: a.stack,
      isFatal: true,
      handled: false,
      timestamp: T0 + 5_000,
    };
    const send = () => s.app.inject({ method: 'POST', url: '/ingest/crash', headers: p.auth, payload: crash });
    expect((await send()).statusCode).toBe(201);
    const [first] = await groups(p.projectId);
    expect((await upload(p.projectId, '6.0.0', '~/assets/index-d00d1e.js.map', a.map, ci)).statusCode).toBe(201);
    // the SDK did not see the first answer and sends the same report again
    expect((await send()).statusCode).toBe(201);

    expect(await groups(p.projectId)).toEqual([first]);
    const occ = await (await s.stores()).ch.query<{ n: number }>(
      'SELECT count() AS n FROM crash_occurrences FINAL WHERE project_id = {p:String}',
      { p: p.projectId },
    );
    expect(Number(occ[0]!.n)).toBe(1);
    const view = await s.app.inject({
      method: 'GET',
      url: `/api/projects/${p.projectId}/crash-groups/${first!.id}`,
      headers: s.admin,
    });
    expect(view.json()).toMatchObject({ occurrenceCount: 1 });

    // a new report of the release after the upload is grouped on the symbolicated stack
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: '/ingest/crash',
          headers: p.auth,
          payload: { ...crash, timestamp: T0 + 6_000 },
        })
      ).statusCode,
    ).toBe(201);
    const after = await groups(p.projectId);
    expect(after).toHaveLength(2);
    expect(after.find((g) => g.id !== first!.id)!.stack_head).toContain('at findOrder (src/orders.ts:6:');
  });
});

describe('CLI uploads', () => {
  it("sourcemaps upload sends a build directory's maps and minified files; mappings upload sends mapping.txt", async () => {
    const p = await s.createProject();
    const ci = (await key(p.projectId, ['upload'])).authorization.slice('Bearer '.length);
    const a = release('https://shop.example.com/assets/index-8f3a2c.js', '8f3a2c');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-build-'));
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'assets/index-8f3a2c.js'), a.code);
    fs.writeFileSync(path.join(dir, 'assets/index-8f3a2c.js.map'), a.map);
    fs.writeFileSync(path.join(dir, 'index.html'), '<html></html>');
    fs.writeFileSync(path.join(dir, 'mapping.txt'), MAPPING);
    const address = await s.app.listen({ host: '127.0.0.1', port: 0 });
    const cli = (...args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args, '--url', address], {
        cwd: process.cwd(),
        env: { ...process.env, FLIGHTREC_UPLOAD_KEY: ci },
      });
    const up = await cli('sourcemaps', 'upload', '--project', p.projectId, '--release', '6.0.0', dir);
    expect(up.stdout).toContain('Uploaded sourcemap ~/assets/index-8f3a2c.js.map');
    expect(up.stdout).toContain('Uploaded minified ~/assets/index-8f3a2c.js');
    const m = await cli(
      'mappings',
      'upload',
      '--project',
      p.projectId,
      '--release',
      '6.0.0+1',
      path.join(dir, 'mapping.txt'),
    );
    expect(m.stdout).toContain('Uploaded proguard mapping.txt');
    const list = await s.app.inject({
      method: 'GET',
      url: `/api/projects/${p.projectId}/releases/6.0.0/artifacts`,
      headers: s.admin,
    });
    expect(
      list
        .json()
        .data.map((x: { name: string }) => x.name)
        .sort(),
    ).toEqual(['~/assets/index-8f3a2c.js', '~/assets/index-8f3a2c.js.map']);
    const refused = await cli(
      'mappings',
      'upload',
      '--project',
      p.projectId,
      '--release',
      '6.0.0',
      path.join(dir, 'index.html'),
      '--key',
      ADMIN_TOKEN,
    ).catch((e) => e);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Error 422');
    fs.rmSync(dir, { recursive: true });
  });
});
