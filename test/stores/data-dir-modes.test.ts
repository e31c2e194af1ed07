import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestServer, tempDataDir } from '../helpers/server.ts';
import * as P from '../helpers/payloads.ts';
import { isSealed, openSecret, secretsKeyOf } from '../../src/lib/secretBox.ts';

// Issue 32, finding 7: 968 of 1,115 PGlite files were 0666 (pg_control writable by `nobody`),
// spool segments and ClickHouse parts 0644, webhook secrets in plain text. Files under DATA_DIR
// are now 0600 and directories 0700, and signing secrets are sealed with a server key.
const embedded = !process.env.DATABASE_URL;

function walk(dir: string, out: { path: string; mode: number; dir: boolean }[] = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isSymbolicLink()) continue;
    out.push({ path: p, mode: fs.statSync(p).mode & 0o777, dir: e.isDirectory() });
    if (e.isDirectory()) walk(p, out);
  }
  return out;
}

describe.skipIf(!embedded)("DATA_DIR is the owner's alone", () => {
  it('after a run (Postgres, ClickHouse parts, spool, the secrets key) no file or directory is open to group or others', async () => {
    const dataDir = tempDataDir();
    // what an older version left: the copied Postgres cluster is as readable as it was written
    fs.chmodSync(path.join(dataDir, 'postgres'), 0o755);
    const s = await startTestServer(
      { INGEST_SPOOL: 'true', SPOOL_LOAD_INTERVAL_MS: '100', RUN_WORKER: 'true' },
      dataDir,
    );
    try {
      const p = await s.createProject();
      const st = P.sessionStart();
      expect(
        (await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st })).statusCode,
      ).toBe(201);
      const ev = await s.app.inject({
        method: 'POST',
        url: '/ingest/events',
        headers: p.auth,
        payload: { sessionId: st.sessionId, events: [P.navigate(st.sessionId, 0)] },
      });
      expect(ev.statusCode).toBe(201);
      expect(
        (await s.app.inject({ method: 'POST', url: '/ingest/crash', headers: p.auth, payload: P.crash(st.sessionId) }))
          .statusCode,
      ).toBe(201);
      expect(await s.svc.spool!.settled()).toBe(true);
    } finally {
      await s.close();
    }
    const all = walk(dataDir);
    expect(all.some((f) => f.path.includes(`${path.sep}clickhouse${path.sep}`) && !f.dir)).toBe(true);
    expect(all.some((f) => f.path.endsWith('pg_control'))).toBe(true);
    expect(all.some((f) => f.path.endsWith('secrets.key'))).toBe(true);
    const open = all
      .filter((f) => f.mode & 0o077)
      .map((f) => `${(f.mode).toString(8)} ${path.relative(dataDir, f.path)}`);
    expect(open).toEqual([]);
    expect(fs.statSync(dataDir).mode & 0o077).toBe(0);
  }, 120_000);

  it('webhook secrets are stored sealed; one stored in plain text before is sealed at the next start', async () => {
    const dataDir = tempDataDir();
    let s = await startTestServer({}, dataDir);
    const p = await s.createProject();
    const { secret, ...made } = await s.createWebhook(p.projectId, { url: 'https://example.com/hook' });
    const row = async (id: string) =>
      (await s.svc.stores.pg.query<{ secret: string }>('SELECT secret FROM webhooks WHERE id = $1', [id])).rows[0]!
        .secret;
    const stored = await row(made.id);
    expect(isSealed(stored)).toBe(true);
    expect(stored).not.toContain(secret);
    const key = secretsKeyOf(fs.readFileSync(path.join(dataDir, 'secrets.key'), 'utf8').trim());
    expect(openSecret(key, stored)).toBe(secret);
    // a row as an older version wrote it
    const old = await s.createWebhook(p.projectId, { url: 'https://example.com/old' });
    await s.svc.stores.pg.query('UPDATE webhooks SET secret = $2 WHERE id = $1', [old.id, 'whsec_plain_from_before']);
    await s.close();
    s = await startTestServer({}, dataDir);
    try {
      const sealed = await row(old.id);
      expect(isSealed(sealed)).toBe(true);
      expect(openSecret(key, sealed)).toBe('whsec_plain_from_before');
      // the one sealed already is left as it was
      expect(await row(made.id)).toBe(stored);
    } finally {
      await s.close();
    }
  }, 120_000);
});
