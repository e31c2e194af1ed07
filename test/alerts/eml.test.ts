import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { outboxIdle } from '../helpers/inspect.ts';
import { parseMail } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';
import { crash, sessionStart } from '../helpers/payloads.ts';

// Embedded mode: no SMTP_URL, no OPENAI_API_KEY.
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({
    RUN_WORKER: 'true',
    ALERT_EMAIL_TO: 'oncall@example.com',
    OUTBOX_POLL_MS: '100',
    PUBLIC_URL: 'http://localhost:3000',
  });
});
afterAll(async () => {
  await s?.close();
});

const mailDir = () => path.join(s.dataDir, 'mail');
const emlFiles = () => (fs.existsSync(mailDir()) ? fs.readdirSync(mailDir()).filter((f) => f.endsWith('.eml')) : []);

async function crashInNewProject(name: string, stackTrace: string) {
  const p = await s.createProject(name);
  const st = sessionStart();
  await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st });
  return {
    ...p,
    session: st.sessionId,
    ingest: () =>
      s.app.inject({
        method: 'POST',
        url: '/ingest/crash',
        headers: p.auth,
        payload: crash(st.sessionId, { stackTrace }),
      }),
  };
}

describe('embedded email', () => {
  it('writes the alert as an .eml file under DATA_DIR/mail, with the deterministic summary', async () => {
    const p = await crashInNewProject('Embedded', 'at render (view.js:7:1)\nat paint (gfx.js:2:9)');
    expect((await p.ingest()).statusCode).toBe(201);
    const [file] = await waitFor('an .eml file', () => (emlFiles().length ? emlFiles() : null));
    const { headers, body } = parseMail(fs.readFileSync(path.join(mailDir(), file!), 'utf8'));
    const groupId = (
      await (
        await s.stores()
      ).pg.query<{ id: string }>('SELECT id FROM crash_groups WHERE project_id = $1', [p.projectId])
    ).rows[0]!.id;
    expect(file).toMatch(new RegExp(`^\\d{4}-.*-crash-group-${groupId}-[0-9a-f]{8}\\.eml$`));
    expect(headers['message-id']).toBe(`<crash-group-${groupId}@flightrec>`);
    expect(headers.to).toBe('oncall@example.com');
    expect(headers.subject).toContain('New crash in Embedded');
    expect(body).toContain('Summary (from the stack trace):');
    expect(body).toContain('in render (view.js:7:1), called from paint (gfx.js:2:9)');
    expect(body).toContain(`http://localhost:3000/#/p/${p.projectId}/crashes/${groupId}`);
    // The file is written before the job records its outcome.
    const g = await waitFor('the job to finish', async () => {
      const x = (
        await s.app.inject({
          method: 'GET',
          url: `/api/projects/${p.projectId}/crash-groups/${groupId}`,
          headers: s.admin,
        })
      ).json();
      return x.alert?.status === 'done' ? x : null;
    });
    expect(g).toMatchObject({ summarySource: 'deterministic', alert: { status: 'done', attempts: 1 } });
    expect(g.alert.note).toMatch(/via file/);
    // No half-written temp files are left behind.
    expect(fs.readdirSync(mailDir()).filter((f) => !f.endsWith('.eml'))).toEqual([]);
  });

  it('a project with an empty recipient list gets its job done with a note and no file', async () => {
    const before = emlFiles().length;
    const p = await crashInNewProject('Muted', 'at quiet (q.js:1:1)');
    await s.app.inject({
      method: 'PATCH',
      url: `/api/projects/${p.projectId}`,
      headers: s.admin,
      payload: { alertEmails: [] },
    });
    expect((await p.ingest()).statusCode).toBe(201);
    const groupId = (
      await (
        await s.stores()
      ).pg.query<{ id: string }>('SELECT id FROM crash_groups WHERE project_id = $1', [p.projectId])
    ).rows[0]!.id;
    const g = await waitFor('the job to finish', async () => {
      const x = (
        await s.app.inject({
          method: 'GET',
          url: `/api/projects/${p.projectId}/crash-groups/${groupId}`,
          headers: s.admin,
        })
      ).json();
      return x.alert?.status === 'done' ? x : null;
    });
    expect(g.alert.note).toMatch(/no recipients/);
    await outboxIdle(s);
    expect(emlFiles().length).toBe(before);
  });
});
