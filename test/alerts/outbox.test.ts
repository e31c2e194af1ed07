import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { outboxIdle } from '../helpers/inspect.ts';
import { startSmtpServer, type TestSmtp } from '../helpers/smtp.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fakeOpenAI.ts';
import { waitFor } from '../helpers/wait.ts';
import { crash, sessionStart, T0 } from '../helpers/payloads.ts';

// The whole path: ingestion → outbox (same transaction) → in-process worker → AI endpoint → SMTP.
let s: TestServer;
let smtp: TestSmtp;
let ai: FakeOpenAI;
const AI_BUDGET_MS = 2000;

beforeAll(async () => {
  [smtp, ai] = await Promise.all([startSmtpServer(), startFakeOpenAI()]);
  s = await startTestServer({
    RUN_WORKER: 'true',
    SMTP_URL: smtp.url,
    ALERT_EMAIL_FROM: 'flightrec <alerts@flightrec.test>',
    ALERT_EMAIL_TO: 'oncall@example.com',
    PUBLIC_URL: 'https://flightrec.example.com',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: ai.baseUrl,
    OPENAI_MODEL: 'test-model',
    OPENAI_TIMEOUT_MS: String(AI_BUDGET_MS),
    OUTBOX_POLL_MS: '200',
    OUTBOX_BACKOFF_BASE_MS: '200',
  });
});
afterAll(async () => {
  await s?.close();
  await Promise.all([smtp?.close(), ai?.close()]);
});

/** A project with one session, and a stack trace no other test uses (so a new group). */
async function setup(name = 'Shop') {
  const p = await s.createProject(name);
  const start = sessionStart();
  const r = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: start });
  expect(r.statusCode).toBe(201);
  const stackTrace = `at ${randomUUID()} (app.js:1:1)\nat caller (app.js:2:2)\nat main (index.js:3:3)`;
  return { ...p, sessionId: start.sessionId, stackTrace };
}

async function ingestCrash(auth: { authorization: string }, sessionId: string, over: Record<string, unknown>) {
  const r = await s.app.inject({
    method: 'POST',
    url: '/ingest/crash',
    headers: auth,
    payload: crash(sessionId, over),
  });
  expect(r.statusCode).toBe(201);
}

async function groupOf(projectId: string) {
  const r = await (await s.stores()).pg.query<{ id: string }>('SELECT id FROM crash_groups WHERE project_id = $1', [
    projectId,
  ]);
  expect(r.rows).toHaveLength(1);
  return r.rows[0]!.id;
}

const mailsFor = (groupId: string) =>
  smtp.mails.filter((m) => m.headers['message-id'] === `<crash-group-${groupId}@flightrec>`);

async function getGroup(projectId: string, groupId: string) {
  const r = await s.app.inject({
    method: 'GET',
    url: `/api/projects/${projectId}/crash-groups/${groupId}`,
    headers: s.admin,
  });
  expect(r.statusCode).toBe(200);
  return r.json();
}

/** The group once its alert job has recorded its outcome (the email arrives a moment before that). */
const finished = (projectId: string, groupId: string) =>
  waitFor('the alert job to finish', async () => {
    const g = await getGroup(projectId, groupId);
    return g.alert?.status === 'done' ? g : null;
  });

/** Waits for every alert job to be done, so a second email would have been sent by then. */
async function settle() {
  await outboxIdle(s);
}

describe('crash alerts', () => {
  it('sends one email with the AI summary for a new group, and none for repeats', async () => {
    ai.mode = 'ok';
    const p = await setup('Shop iOS');
    await ingestCrash(p.auth, p.sessionId, { stackTrace: p.stackTrace, message: 'TypeError: cart is undefined' });
    const groupId = await groupOf(p.projectId);
    await waitFor('the alert email', () => mailsFor(groupId).length === 1);

    const mail = mailsFor(groupId)[0]!;
    expect(mail.rcptTo).toEqual(['oncall@example.com']);
    expect(mail.headers.from).toBe('flightrec <alerts@flightrec.test>');
    expect(mail.headers.subject).toBe('[flightrec] New crash in Shop iOS: TypeError: cart is undefined');
    for (const part of [
      'Project: Shop iOS',
      'TypeError: cart is undefined',
      ai.reply,
      'Summary (openai:test-model)',
      'First seen: 2026-01-01T00:00:09.000Z',
      'App version: 1.4.0 (140)',
      'Platform: ios 17.2',
      'Device: Apple iPhone15,2',
      'at caller (app.js:2:2)',
      `https://flightrec.example.com/#/p/${p.projectId}/crashes/${groupId}`,
    ])
      expect(mail.body).toContain(part);

    // The prompt carried the message, the stack head and the context.
    const req = ai.requests.find((r) => r.messages.some((m) => m.content.includes('TypeError: cart is undefined')))!;
    expect(req.model).toBe('test-model');
    expect(req.messages.map((m) => m.content).join('\n')).toContain('at caller (app.js:2:2)');

    const g = await finished(p.projectId, groupId);
    expect(g).toMatchObject({ summary: ai.reply, summarySource: 'openai:test-model', appVersions: ['1.4.0'] });
    expect(g.alert).toMatchObject({ status: 'done', attempts: 1, lastError: null });
    expect(g.alert.sentAt).toEqual(expect.any(String));

    // Later occurrences: counted, no summary request, no email.
    const aiCalls = ai.requests.length;
    for (let i = 1; i <= 3; i++)
      await ingestCrash(p.auth, p.sessionId, {
        stackTrace: p.stackTrace,
        message: 'TypeError: cart is undefined',
        timestamp: T0 + 9000 + i,
      });
    await settle();
    expect(mailsFor(groupId)).toHaveLength(1);
    expect(ai.requests.length).toBe(aiCalls);
    expect((await getGroup(p.projectId, groupId)).occurrenceCount).toBe(4);
  });

  it('concurrent first occurrences of one new group produce one job and one email', async () => {
    ai.mode = 'ok';
    const p = await setup('Concurrent');
    const sessions = [p.sessionId];
    for (let i = 0; i < 4; i++) {
      const st = sessionStart();
      await s.app.inject({ method: 'POST', url: '/ingest/session', headers: p.auth, payload: st });
      sessions.push(st.sessionId);
    }
    const N = 40;
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        s.app.inject({
          method: 'POST',
          url: '/ingest/crash',
          headers: p.auth,
          payload: crash(sessions[i % sessions.length]!, {
            stackTrace: p.stackTrace,
            timestamp: T0 + 20_000 + (N - i),
          }),
        }),
      ),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(N).fill(201));
    const groupId = await groupOf(p.projectId);
    const jobs = await s.worker!.worker.repo.byGroup(groupId);
    expect(jobs).toHaveLength(1);

    await waitFor('the alert email', () => mailsFor(groupId).length >= 1);
    await settle();
    expect(mailsFor(groupId)).toHaveLength(1);
    const g = await finished(p.projectId, groupId);
    expect(g.occurrenceCount).toBe(N);
    expect(g.firstSeenAt).toBe(new Date(T0 + 20_001).toISOString());
    expect(g.alert).toMatchObject({ status: 'done', attempts: 1 });
    expect(
      ai.requests.filter((r) => r.messages.some((m) => m.content.includes(p.stackTrace.split('\n')[0]!))),
    ).toHaveLength(1);
  });

  it('falls back to the deterministic summary when the AI endpoint fails', async () => {
    ai.mode = 'error';
    const p = await setup('AI down');
    await ingestCrash(p.auth, p.sessionId, { stackTrace: p.stackTrace });
    const groupId = await groupOf(p.projectId);
    await waitFor('the alert email', () => mailsFor(groupId).length === 1);
    const g = await finished(p.projectId, groupId);
    expect(g.summarySource).toBe('deterministic');
    expect(g.summary).toContain(p.stackTrace.split('\n')[0]!.replace(/^at /, ''));
    expect(mailsFor(groupId)[0]!.body).toContain('Summary (from the stack trace):');
    expect(ai.requests.length).toBeGreaterThan(0);
  });

  it('does not hold the email longer than the AI budget when the endpoint hangs', async () => {
    ai.mode = 'hang';
    const p = await setup('AI hangs');
    const t = Date.now();
    await ingestCrash(p.auth, p.sessionId, { stackTrace: p.stackTrace });
    expect(Date.now() - t).toBeLessThan(AI_BUDGET_MS); // ingestion never waits for the worker
    const groupId = await groupOf(p.projectId);
    await waitFor('the alert email', () => mailsFor(groupId).length === 1, AI_BUDGET_MS + 5000);
    expect(Date.now() - t).toBeLessThan(AI_BUDGET_MS + 3000);
    expect((await getGroup(p.projectId, groupId)).summarySource).toBe('deterministic');
    ai.mode = 'ok';
  });

  it('sends to the project recipients when set, and nothing when the list is empty', async () => {
    ai.mode = 'ok';
    const p = await setup('Own recipients');
    const patch = await s.app.inject({
      method: 'PATCH',
      url: `/api/projects/${p.projectId}`,
      headers: s.admin,
      payload: { alertEmails: ['dev1@example.com', 'dev2@example.com'] },
    });
    expect(patch.statusCode).toBe(200);
    await ingestCrash(p.auth, p.sessionId, { stackTrace: p.stackTrace });
    const groupId = await groupOf(p.projectId);
    // One copy per recipient: each carries its own unsubscribe link, and no one sees the others.
    await waitFor('the alert emails', () => mailsFor(groupId).length === 2);
    expect(
      mailsFor(groupId)
        .map((m) => m.rcptTo)
        .sort(),
    ).toEqual([['dev1@example.com'], ['dev2@example.com']]);

    const muted = await setup('Muted');
    await s.app.inject({
      method: 'PATCH',
      url: `/api/projects/${muted.projectId}`,
      headers: s.admin,
      payload: { alertEmails: [] },
    });
    await ingestCrash(muted.auth, muted.sessionId, { stackTrace: muted.stackTrace });
    const mutedGroup = await groupOf(muted.projectId);
    const g = await finished(muted.projectId, mutedGroup);
    expect(g.alert.note).toMatch(/no recipients/);
    expect(g.alert.sentAt).toBeNull();
    // The summary is still made and stored; with nobody to mail, not by the AI (its calls are for alerts)
    expect(g.summarySource).toBe('deterministic');
    expect(mailsFor(mutedGroup)).toHaveLength(0);
  });
});
