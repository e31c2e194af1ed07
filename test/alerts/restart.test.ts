import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.ts';
import { outboxIdle } from '../helpers/inspect.ts';
import { startSmtpServer, type TestSmtp } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';
import { crash, sessionStart, T0 } from '../helpers/payloads.ts';

// One DATA_DIR (and one database) across three lives of the service.
let smtp: TestSmtp;
let s: TestServer | undefined;
const dataDir = tempDataDir();

beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await s?.close();
  await smtp?.close();
});

const start = (runWorker: boolean) =>
  startTestServer(
    { RUN_WORKER: String(runWorker), SMTP_URL: smtp.url, ALERT_EMAIL_TO: 'oncall@example.com', OUTBOX_POLL_MS: '100' },
    dataDir,
  );

describe('alerts across restarts', () => {
  it('a job enqueued before a restart is sent after it, once; later restarts send nothing', async () => {
    // Life 1: no worker. The crash is accepted and its job waits in the outbox.
    s = await start(false);
    const p = await s.createProject('Restarts');
    const st = sessionStart();
    await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st });
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/crash',
      headers: p.auth,
      payload: crash(st.sessionId),
    });
    expect(r.statusCode).toBe(201);
    const groupId = (
      await (
        await s.stores()
      ).pg.query<{ id: string }>('SELECT id FROM crash_groups WHERE project_id = $1', [p.projectId])
    ).rows[0]!.id;
    await s.close();
    s = undefined;
    expect(smtp.mails).toHaveLength(0);

    // Life 2: the worker picks it up; a repeat occurrence adds no email.
    s = await start(true);
    await waitFor('the alert email', () => smtp.mails.length === 1);
    expect(smtp.mails[0]!.headers['message-id']).toBe(`<crash-group-${groupId}@flightrec>`);
    await s.app.inject({
      method: 'POST',
      url: '/ingest/crash',
      headers: p.auth,
      payload: crash(st.sessionId, { timestamp: T0 + 50_000 }),
    });
    await outboxIdle(s);
    await s.close();
    s = undefined;

    // Life 3: nothing is due, nothing is sent again.
    s = await start(true);
    await outboxIdle(s);
    expect(smtp.mails).toHaveLength(1);
    const g = await s.app.inject({
      method: 'GET',
      url: `/api/projects/${p.projectId}/crash-groups/${groupId}`,
      headers: s.admin,
    });
    expect(g.json()).toMatchObject({
      occurrenceCount: 2,
      summarySource: 'deterministic',
      alert: { status: 'done', attempts: 1 },
    });
  });
});
