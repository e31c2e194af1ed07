// Crashes reported before any session (issue 33 item 3): captureCrashes is on by default and
// autoSession off, so an early throw comes before the app's startSession. It is kept and goes
// into the session the app starts next, or, if none starts by the next flush tick (or the app
// is going down), into a session started for it. Counted through the export API.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlightrecClient, type FlightrecError, type FlightrecOptions } from '../src/index.ts';
import { startTestServer, type TestServer } from '../../test/helpers/server.ts';
import { waitFor } from '../../test/helpers/wait.ts';

let s: TestServer;
let base: string;

beforeAll(async () => {
  s = await startTestServer({ RATE_LIMIT_EXPORT_PER_MIN: '100000', RATE_LIMIT_INGEST_PER_MIN: '100000' });
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await s?.close();
});

async function exported<T>(apiKey: string, route: string): Promise<T[]> {
  // Over the socket, not inject: wait for what was acknowledged to be loaded from the spools.
  await s.settled();
  const r = await fetch(`${base}${route}?limit=1000`, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { data: T[] }).data;
}
interface SessionRow {
  id: string;
  status: string;
  hasCrash: boolean;
  userId: string | null;
}
interface CrashRow {
  message: string;
  occurrenceCount: number;
  isFatal: boolean;
}
const sessionsOf = (k: string) => exported<SessionRow>(k, '/export/sessions');
const crashesOf = (k: string) => exported<CrashRow>(k, '/export/crashes');
const counted = async (k: string) => (await crashesOf(k)).map((x) => [x.message, x.occurrenceCount]);

function client(apiKey: string, over: Partial<FlightrecOptions> = {}) {
  const errors: FlightrecError[] = [];
  const c = new FlightrecClient({
    apiKey,
    endpoint: base,
    device: { platform: 'linux' },
    captureCrashes: false,
    flushOnExit: false,
    onError: (e) => errors.push(e),
    ...over,
  });
  return { c, errors };
}

describe('crashes before any session', () => {
  it('join the session the app starts next', async () => {
    const { apiKey } = await s.createProject('early crash joins');
    const { c, errors } = client(apiKey, { flushIntervalMs: 60_000 });
    await c.reportCrash(new Error('thrown before startSession'), { handled: false });
    const sid = c.startSession({ userId: 'u1' });
    await c.shutdown();
    expect(errors.filter((e) => e.kind === 'usage')).toEqual([]);
    expect(await sessionsOf(apiKey)).toMatchObject([{ id: sid, hasCrash: true, status: 'completed', userId: 'u1' }]);
    expect(await counted(apiKey)).toEqual([['thrown before startSession', 1]]);
  });

  it('get a session of their own when the app starts none by the next flush tick', async () => {
    const { apiKey } = await s.createProject('early crash alone');
    const { c } = client(apiKey, { flushIntervalMs: 200 });
    await c.reportCrash(new Error('nobody started a session'));
    await c.reportCrash(new Error('and a second one'));
    const ended = async () => (await sessionsOf(apiKey))[0]?.status === 'completed';
    await waitFor('a session for the crashes', ended, 15_000, 50);
    expect(c.sessionId).toBeUndefined();
    expect(await sessionsOf(apiKey)).toMatchObject([{ hasCrash: true, status: 'completed' }]);
    const messages = (await crashesOf(apiKey)).map((x) => x.message).sort();
    expect(messages).toEqual(['and a second one', 'nobody started a session']);
    await c.shutdown();
    expect(await sessionsOf(apiKey)).toHaveLength(1);
  });

  it('a fatal one is sent at once, in a crashed session of its own', async () => {
    const { apiKey } = await s.createProject('early fatal');
    const { c } = client(apiKey, { flushIntervalMs: 60_000 });
    await c.reportCrash(new Error('fatal before any session'), { isFatal: true, handled: false });
    expect(await sessionsOf(apiKey)).toMatchObject([{ status: 'crashed', hasCrash: true }]);
    const fatal = { message: 'fatal before any session', isFatal: true, occurrenceCount: 1 };
    expect(await crashesOf(apiKey)).toMatchObject([fatal]);
    await c.shutdown();
  });

  it('shutdown sends what is pending', async () => {
    const { apiKey } = await s.createProject('early crash shutdown');
    const { c } = client(apiKey, { flushIntervalMs: 60_000 });
    void c.reportCrash('a string thrown early');
    await c.shutdown();
    expect((await crashesOf(apiKey)).map((x) => x.message)).toEqual(['a string thrown early']);
  });
});
