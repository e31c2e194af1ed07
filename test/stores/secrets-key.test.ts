import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestServer, tempDataDir } from '../helpers/server.ts';

// A process whose server key differs from the one that sealed the database's secrets (a second
// process on one Postgres with a key generated into its own DATA_DIR, or a SECRETS_KEY changed by
// mistake) refused nothing: it sealed new secrets the others could not open, and failed to sign
// every webhook the others had made. It now refuses to start.
const OTHER_KEY = 'another-server-key-that-is-long-enough-0123';

async function refusal(env: Record<string, string>, dataDir: string): Promise<string> {
  const started = await startTestServer(env, dataDir).then(
    async (s) => {
      await s.close();
      return undefined;
    },
    (err: unknown) => String(err),
  );
  expect(started, 'the server started with a key that does not open the stored secrets').toBeDefined();
  return started!;
}

/** A server on `dataDir` with one project holding one webhook (its secret sealed at creation). */
async function withWebhook(dataDir: string) {
  const s = await startTestServer({}, dataDir);
  const p = await s.createProject();
  await s.createWebhook(p.projectId, { url: 'https://example.com/hook' });
  return { s, projectId: p.projectId };
}

describe('the server key is the one that sealed the stored secrets', () => {
  it('a process with another key refuses to start; the key that sealed them starts', async () => {
    const dataDir = tempDataDir();
    let { s, projectId } = await withWebhook(dataDir);
    // the key this process ran with: SECRETS_KEY when the run sets one, else its generated file
    const key = process.env.SECRETS_KEY ?? fs.readFileSync(path.join(dataDir, 'secrets.key'), 'utf8').trim();
    await s.close();

    expect(await refusal({ SECRETS_KEY: OTHER_KEY }, dataDir)).toMatch(/same SECRETS_KEY/);
    // nothing was sealed with the refused key meanwhile: the right one still opens everything
    s = await startTestServer({ SECRETS_KEY: key }, dataDir);
    try {
      const hooks = await s.app.inject({ url: `/api/projects/${projectId}/webhooks`, headers: s.admin });
      expect(hooks.statusCode).toBe(200);
      expect(hooks.json().items).toHaveLength(1);
    } finally {
      await s.close();
    }
  }, 120_000);

  it('a database from before the check is told the key by its sealed webhook secrets', async () => {
    const dataDir = tempDataDir();
    let { s } = await withWebhook(dataDir);
    // as the release before this check left it: sealed secrets, no check value
    await s.svc.stores.pg.query('DELETE FROM secrets_key_check');
    await s.close();

    expect(await refusal({ SECRETS_KEY: OTHER_KEY }, dataDir)).toMatch(/same SECRETS_KEY/);
    s = await startTestServer({}, dataDir);
    try {
      const check = await s.svc.stores.pg.query('SELECT 1 FROM secrets_key_check');
      expect(check.rows).toHaveLength(1);
    } finally {
      await s.close();
    }
  }, 120_000);
});
