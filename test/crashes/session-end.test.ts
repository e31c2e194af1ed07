import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { crash, sessionStart, T0 } from '../helpers/payloads.ts';

// DESIGN "Session end": a fatal crash gives the session a provisional end at the crash's time;
// an explicit /ingest/session/end afterwards still sets the end (the first explicit one wins);
// a handled error ends nothing.
let s: TestServer;
let auth: { authorization: string };
beforeAll(async () => {
  s = await startTestServer({ RUN_WORKER: 'false' });
  auth = (await s.createProject()).auth;
});
afterAll(async () => {
  await s?.close();
});

const post = (url: string, payload: object) => s.app.inject({ method: 'POST', url, headers: auth, payload });
async function started(): Promise<string> {
  const st = sessionStart();
  expect((await post('/ingest/session', st)).statusCode).toBe(201);
  return st.sessionId;
}
async function exported(id: string) {
  const r = await s.app.inject({ method: 'GET', url: '/export/sessions?limit=1000', headers: auth });
  expect(r.statusCode).toBe(200);
  return (r.json().data as { id: string; status: string; duration: number | null; endedAt: string | null }[]).find(
    (x) => x.id === id,
  );
}
async function csvRow(id: string) {
  const r = await s.app.inject({ method: 'GET', url: '/export/sessions?format=csv&limit=1000', headers: auth });
  return r.body.split('\n').find((l) => l.includes(id));
}

describe('a crashed session ends', () => {
  it('a fatal crash sets endedAt at its timestamp and the duration from the start', async () => {
    const id = await started();
    expect((await post('/ingest/crash', crash(id, { isFatal: true, timestamp: T0 + 9_000 }))).statusCode).toBe(201);
    expect(await exported(id)).toMatchObject({
      status: 'crashed',
      endedAt: new Date(T0 + 9_000).toISOString(),
      duration: 9_000,
    });
    expect(await csvRow(id)).toContain(new Date(T0 + 9_000).toISOString());
  });

  it('an explicit end afterwards replaces the provisional one, once; a later end is ignored', async () => {
    const id = await started();
    await post('/ingest/crash', crash(id, { isFatal: true, timestamp: T0 + 9_000 }));
    expect((await post('/ingest/session/end', { sessionId: id, endedAt: T0 + 12_000 })).statusCode).toBe(200);
    expect(await exported(id)).toMatchObject({
      status: 'crashed',
      endedAt: new Date(T0 + 12_000).toISOString(),
      duration: 12_000,
    });
    await post('/ingest/session/end', { sessionId: id, endedAt: T0 + 50_000 });
    expect((await exported(id))?.duration).toBe(12_000);
  });

  it('a fatal crash after an explicit end keeps that end; a crash dated before the start ends at the start', async () => {
    const ended = await started();
    await post('/ingest/session/end', { sessionId: ended, endedAt: T0 + 5_000 });
    await post('/ingest/crash', crash(ended, { isFatal: true, timestamp: T0 + 9_000 }));
    expect(await exported(ended)).toMatchObject({ status: 'crashed', duration: 5_000 });

    const skewed = await started();
    await post('/ingest/crash', crash(skewed, { isFatal: true, timestamp: T0 - 60_000 }));
    expect(await exported(skewed)).toMatchObject({ duration: 0, endedAt: new Date(T0).toISOString() });
  });

  it('a handled error ends nothing; a fatal crash after it does', async () => {
    const id = await started();
    await post('/ingest/crash', crash(id, { isFatal: false, handled: true, timestamp: T0 + 3_000 }));
    expect(await exported(id)).toMatchObject({ status: 'active', endedAt: null, duration: null });
    await post('/ingest/crash', crash(id, { isFatal: true, timestamp: T0 + 7_000, stackTrace: 'at other (x.js:1:1)' }));
    expect(await exported(id)).toMatchObject({ status: 'crashed', duration: 7_000 });
  });
});

describe('decideEnd with a provisional end', () => {
  it('the first explicit end replaces a provisional one; an accepted one is final', async () => {
    const { decideEnd } = await import('../../src/domain/sessionState.ts');
    expect(decideEnd({ startedAt: 10, endedAt: 20, provisional: true }, 30)).toBe('apply');
    expect(decideEnd({ startedAt: 10, endedAt: 20, provisional: true }, 5)).toBe('before-start');
    expect(decideEnd({ startedAt: 10, endedAt: 20, provisional: false }, 30)).toBe('ignore');
  });
});
