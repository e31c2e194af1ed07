import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer, ADMIN_TOKEN, type TestServer } from '../helpers/server.ts';
import { buildCli } from '../../scripts/build-cli.mjs';

// The CLI as `npm run cli` runs it: the prebuilt JavaScript bundle (scripts/build-cli.mjs, built
// here into a temporary directory), started by plain Node against a listening server: human
// tables by default, --json for scripts, plain errors, projects list, rule edits, a webhook test.

let s: TestServer;
let dir = '';
let bundle = '';
let address = '';

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-cli-'));
  bundle = await buildCli({ out: path.join(dir, 'cli.mjs') });
  s = await startTestServer();
  address = await s.app.listen({ host: '127.0.0.1', port: 0 });
}, 60_000);
afterAll(async () => {
  await s?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) =>
  promisify(execFile)(process.execPath, [bundle, ...args, '--url', address, '--token', ADMIN_TOKEN], { cwd: dir });
const failed = (...args: string[]) =>
  cli(...args).then(
    () => {
      throw new Error('expected a failure');
    },
    (e) => e as { code: number; stdout: string; stderr: string },
  );

describe('the built CLI', () => {
  it('is one JavaScript file that imports no TypeScript', () => {
    const code = fs.readFileSync(bundle, 'utf8');
    expect(code).not.toMatch(/from ["'][^"']+\.ts["']/);
    expect(code).not.toContain('tsx');
  });

  it('lists projects as a table, or as JSON with --json', async () => {
    const a = await s.createProject('Alpha app');
    const b = await s.createProject('Beta app');
    const out = await cli('projects', 'list');
    const lines = out.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+TEAM\s+CREATED$/);
    expect(lines.find((l) => l.startsWith(a.projectId))).toMatch(/Alpha app\s+none\s+\d{4}-/);
    expect(out.stdout).toContain(b.projectId);
    expect(out.stdout.endsWith('\n')).toBe(true);
    const json = JSON.parse((await cli('projects', 'list', '--json')).stdout);
    expect(json.items.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining([a.projectId, b.projectId]));
  });

  it('says what is wrong in plain words, before any request, and exits non-zero', async () => {
    const bad = await failed('keys', 'create', '--project', 'my-app');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--project "my-app" is not a project id');
    expect(bad.stderr).toContain('projects list');
    expect(bad.stderr).not.toContain('Invalid params');
    const projectsBefore = (
      await s.app.inject({ url: '/api/projects', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).json().items.length;
    const badTeam = await failed('projects', 'create', '--name', 'Gamma app', '--team', 'not-a-uuid');
    expect(badTeam.code).toBe(2);
    expect(badTeam.stderr).toContain('--team "not-a-uuid" is not a team id');
    expect(
      (await s.app.inject({ url: '/api/projects', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json().items,
    ).toHaveLength(projectsBefore);
    const missing = await failed(
      'alert-rules',
      'create',
      '--project',
      (await s.createProject()).projectId,
      '--name',
      'x',
      '--kind',
      'spike',
      '--threshold',
      'lots',
    );
    expect(missing.stderr).toContain('--threshold must be a number, not "lots"');
    const refused = await failed(
      'alert-rules',
      'create',
      '--project',
      (await s.createProject()).projectId,
      '--name',
      'x',
      '--kind',
      'crash_free',
      '--threshold',
      '150',
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Error 422');
    expect(refused.stderr).toContain('threshold');
  });

  it('creates, edits and lists rules, and sends a webhook a test delivery', async () => {
    const p = await s.createProject('Rules');
    const hook = JSON.parse(
      (await cli('webhooks', 'create', '--project', p.projectId, '--endpoint', 'https://example.com/hook', '--json'))
        .stdout,
    );
    const made = await cli(
      'alert-rules',
      'create',
      '--project',
      p.projectId,
      '--name',
      'Rollout watch',
      '--kind',
      'crash_free_regression',
      '--min-sessions',
      '20',
      '--webhooks',
      hook.id,
    );
    const ruleId = /\(([0-9a-f-]{36})\)/.exec(made.stdout)![1]!;
    expect(made.stdout).toMatch(
      /^Rule "Rollout watch" \(.+\): crash_free_regression significantly below the previous release in 1440 min\n$/,
    );
    const edited = await cli(
      'alert-rules',
      'update',
      '--project',
      p.projectId,
      ruleId,
      '--name',
      'Rollout',
      '--window',
      '60',
      '--disable',
    );
    expect(edited.stdout).toContain('Rule "Rollout"');
    expect(edited.stdout).toContain('in 60 min, off');
    const both = await failed('alert-rules', 'update', '--project', p.projectId, ruleId, '--enable', '--disable');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('Give --enable or --disable, not both');
    const notRule = await failed('alert-rules', 'delete', '--project', p.projectId, 'nope');
    expect(notRule.stderr).toContain('RULE_ID "nope" is not an alert rule id');
    const list = (await cli('alert-rules', 'list', '--project', p.projectId)).stdout.split('\n');
    expect(list[0]).toMatch(/^ID\s+NAME\s+FIRES WHEN\s+ON$/);
    expect(list[1]).toMatch(new RegExp(`^${ruleId}\\s+Rollout\\s+crash_free_regression .+\\s+no$`));
    const test = await cli('webhooks', 'test', '--project', p.projectId, hook.id);
    expect(test.stdout).toMatch(/^Test delivery [0-9a-f-]{36} queued/);
    const log = await cli('webhooks', 'deliveries', '--project', p.projectId);
    expect(log.stdout).toMatch(/webhook\.test/);
  });

  it('ends the upload summary with a line break', async () => {
    const p = await s.createProject('Uploads');
    const file = path.join(dir, 'mapping.txt');
    fs.writeFileSync(file, 'com.example.Shop -> a.a:\n    void checkout() -> a\n');
    const up = await cli(
      'mappings',
      'upload',
      '--project',
      p.projectId,
      '--release',
      '1.0.0',
      file,
      '--key',
      ADMIN_TOKEN,
    );
    expect(up.stdout).toMatch(
      /Uploaded proguard mapping\.txt \(\d+ bytes\)\n\n1 artifact of release 1\.0\.0 uploaded\n$/,
    );
  });
});
