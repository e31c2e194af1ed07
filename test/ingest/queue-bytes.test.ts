import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { navigate, sessionStart } from '../helpers/payloads.ts';
import { waitFor } from '../helpers/wait.ts';

// Without the spool (INGEST_SPOOL=false) a body waits in memory for its group-commit insert, and
// INGEST_QUEUE_BYTES bounds those bytes. The smallest budget, so a stalled insert fills it with a
// few bodies.
let s: TestServer;
let p: Awaited<ReturnType<TestServer['createProject']>>;
beforeAll(async () => {
  s = await startTestServer({ INGEST_SPOOL: 'false', INGEST_QUEUE_BYTES: String(1024 * 1024) });
  p = await s.createProject();
});
afterAll(async () => {
  await s?.close();
});

const post = (url: string, payload: unknown) =>
  s.app.inject({ method: 'POST', url, headers: p.auth, payload: payload as string });

describe('memory back-pressure by bytes (INGEST_QUEUE_BYTES), without the spool', () => {
  it('while inserts stall, bodies past the byte budget get 503 with Retry-After, the others are stored', async () => {
    const st = sessionStart();
    expect((await post('/ingest/session', st)).statusCode).toBe(201);
    const sid = st.sessionId;
    const ch = s.svc.stores.ch;
    const real = ch.insertBytes.bind(ch);
    let release!: () => void;
    const stalled = new Promise<void>((r) => (release = r));
    ch.insertBytes = (async (...args: Parameters<typeof ch.insertBytes>) => {
      await stalled;
      return real(...args);
    }) as typeof ch.insertBytes;
    // ~300 KB each: the budget (1 MiB) holds three.
    const batch = (k: number) => ({
      sessionId: sid,
      events: Array.from({ length: 100 }, (_, i) => navigate(sid, k * 100 + i, `/${'x'.repeat(3000)}`)),
    });
    const answered: number[] = [];
    const pending = [0, 1, 2, 3, 4, 5].map((k) =>
      post('/ingest/events', batch(k)).then((r) => {
        answered.push(r.statusCode);
        return r;
      }),
    );
    // The bodies past the budget are answered while the stalled insert holds the others.
    await waitFor('a body refused past the byte budget', () => answered.includes(503));
    release();
    ch.insertBytes = real;
    const answers = await Promise.all(pending);
    const refused = answers.filter((r) => r.statusCode === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.headers['retry-after']).toBe('1');
    expect(answers.filter((r) => r.statusCode === 201).length).toBeGreaterThan(0);
    expect(answers.every((r) => r.statusCode === 201 || r.statusCode === 503)).toBe(true);
  });
});
