import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestServer, tempDataDir } from '../helpers/server.ts';
import { ChildService, freePort } from '../reliability/child.ts';
import * as P from '../helpers/payloads.ts';

// Issue 32, finding 6: a second process started on a DATA_DIR in use opened its embedded Postgres
// before ClickHouse's lock refused it; after a kill -9 of the first, the cluster no longer
// started (RuntimeError: Aborted()). One lock on DATA_DIR is now taken before anything opens.
const embedded = !process.env.DATABASE_URL;
const children: ChildService[] = [];
afterAll(async () => {
  await Promise.all(children.map((c) => c.stop('SIGKILL')));
});

describe.skipIf(!embedded)('one lock on DATA_DIR', () => {
  it('a second process on a DATA_DIR in use exits before touching it; the first, killed -9, restarts with its data', async () => {
    const dataDir = tempDataDir();
    const env = async () => ({ DATA_DIR: dataDir, PORT: String(await freePort()), ADMIN_TOKEN, LOG_LEVEL: 'warn' });
    const first = new ChildService(await env());
    children.push(first);
    await first.start();
    const created = await fetch(`${first.url}/api/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: '{"name":"kept"}',
    });
    expect(created.status).toBe(201);
    const { project, apiKey } = (await created.json()) as { project: { id: string }; apiKey: string };
    const st = P.sessionStart();
    const ingest = await fetch(`${first.url}/ingest/session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(st),
    });
    expect(ingest.status).toBe(201);

    const second = new ChildService(await env());
    children.push(second);
    await expect(second.start()).rejects.toThrow(/exited during start/);
    expect(second.output).toContain(
      `DATA_DIR ${dataDir} is in use by another flightrec process (pid ${first.proc!.pid}`,
    );
    expect(second.proc!.exitCode).toBe(1);

    expect((await first.stop('SIGKILL')).signal).toBe('SIGKILL');
    const third = new ChildService(await env());
    children.push(third);
    await third.start();
    const got = await fetch(`${third.url}/api/projects/${project.id}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(got.status).toBe(200);
    const sessions = await fetch(`${third.url}/export/sessions`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(((await sessions.json()) as { data: { id: string }[] }).data.map((x) => x.id)).toContain(st.sessionId);
    await third.stop('SIGTERM');
    // a clean stop gives the directory back
    expect(fs.existsSync(path.join(dataDir, 'owner.lock'))).toBe(false);
  }, 240_000);

  it('in one process too: a server on a DATA_DIR another holds is refused, and gets it once that one closes', async () => {
    const dataDir = tempDataDir();
    const a = await startTestServer({}, dataDir);
    await expect(startTestServer({}, dataDir)).rejects.toThrow(/is in use by another flightrec process/);
    await a.close();
    const b = await startTestServer({}, dataDir);
    await b.close();
  }, 120_000);
});
