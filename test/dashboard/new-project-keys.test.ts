import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { signup } from '../helpers/accounts.ts';
import { sessionStart } from '../helpers/payloads.ts';
import { listeningUrl, loadConfig } from '../../src/config.ts';
import { ADMIN_TOKEN, tempDataDir } from '../helpers/server.ts';
import { ChildService, freePort } from '../reliability/child.ts';

// Issue 32, finding 10: the setup page put the project's first key (ingest and export) into the
// app snippet, so anyone who pulled it out of an app could export every session; links used
// PUBLIC_URL's localhost:3000 when the server ran on another PORT.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({});
});
afterAll(async () => {
  await s?.close();
});

describe('a project made on the dashboard', () => {
  it('comes with an ingest-only key for the app snippet, which sends and reads nothing back', async () => {
    const a = await signup(s);
    const r = await s.app.inject({
      method: 'POST',
      url: '/api/dashboard/projects',
      headers: a.headers,
      payload: { name: 'Shop' },
    });
    expect(r.statusCode).toBe(201);
    const body = r.json();
    expect(body.ingestKey).toMatchObject({ scopes: ['ingest'], name: 'App (ingest only)' });
    expect(body.ingestApiKey).not.toBe(body.apiKey);
    const app = { authorization: `Bearer ${body.ingestApiKey}` };
    expect(
      (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: app, payload: sessionStart() }))
        .statusCode,
    ).toBe(201);
    expect((await s.app.inject({ method: 'GET', url: '/export/sessions', headers: app })).statusCode).toBe(403);
    // the project's first key still exports, for the team's own scripts
    expect(
      (
        await s.app.inject({
          method: 'GET',
          url: '/export/sessions',
          headers: { authorization: `Bearer ${body.apiKey}` },
        })
      ).statusCode,
    ).toBe(200);
  });

  it('the setup page fills the snippet with that ingest-only key', async () => {
    const { readFile } = await import('node:fs/promises');
    const view = await readFile(new URL('../../web/views/projects.js', import.meta.url), 'utf8');
    expect(view).toContain('setupGuide(r.project.id, r.ingestApiKey)');
    expect(view).not.toContain('setupGuide(r.project.id, r.apiKey)');
  });
});

describe('PUBLIC_URL', () => {
  it('defaults to the listening address, on any PORT', () => {
    expect(loadConfig({ PORT: '4123' }).publicUrl).toBe('http://localhost:4123');
    expect(loadConfig({ PORT: '4123' }).publicUrlSet).toBe(false);
    expect(loadConfig({ HOST: '10.0.0.5', PORT: '8080' }).publicUrl).toBe('http://10.0.0.5:8080');
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '80' }).publicUrl).toBe('http://localhost:80');
    expect(listeningUrl('fd00::1', 3000)).toBe('http://[fd00::1]:3000');
    expect(loadConfig({ PUBLIC_URL: 'https://rec.example.com/', PORT: '4123' })).toMatchObject({
      publicUrl: 'https://rec.example.com',
      publicUrlSet: true,
    });
  });
});

describe('start-up', () => {
  it('warns, naming the address it uses, when PUBLIC_URL is not set', async () => {
    const port = await freePort();
    const svc = new ChildService({ DATA_DIR: tempDataDir(), PORT: String(port), ADMIN_TOKEN, LOG_LEVEL: 'warn' });
    try {
      await svc.start();
      expect(svc.output).toContain(`PUBLIC_URL is not set: links in mail and webhooks use http://localhost:${port}`);
    } finally {
      await svc.stop('SIGTERM');
    }
  }, 120_000);
});
