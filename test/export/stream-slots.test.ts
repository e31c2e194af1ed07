import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { openRedis } from '../../src/stores/redis.ts';
import { StreamSlots } from '../../src/services/streamSlots.ts';
import { waitFor } from '../helpers/wait.ts';

// Finding 6 of the third probe: the cap of streamed exports per project was per process
// (N processes, N × 4 streams). With REDIS_URL the slots live in Redis: two StreamSlots with
// their own Redis connections play two API processes. Needs a Redis: skipped without REDIS_URL.
const url = process.env.REDIS_URL;
const clients: ReturnType<typeof openRedis>[] = [];
async function connect() {
  const r = openRedis(url!);
  clients.push(r);
  if (r.client.status !== 'ready') await new Promise((ok) => r.client.once('ready', ok));
  return r;
}
afterAll(() => {
  for (const c of clients) c.client.disconnect();
});

describe.skipIf(!url)('the stream cap shared through Redis (REDIS_URL)', () => {
  const prefix = `flightrec-test-${randomUUID()}`;

  it('two processes share one cap per project; a release frees a slot for either', async () => {
    const a = new StreamSlots(3, await connect(), prefix);
    const b = new StreamSlots(3, await connect(), prefix);
    const project = randomUUID();
    const r1 = await a.acquire(project);
    const r2 = await b.acquire(project);
    const r3 = await a.acquire(project);
    expect([r1, r2, r3].every((r) => typeof r === 'function')).toBe(true);
    expect(await b.acquire(project)).toBeNull();
    expect(await a.acquire(project)).toBeNull();
    // Another project has its own slots.
    expect(await b.acquire(randomUUID())).not.toBeNull();
    // The release reaches Redis on a's connection; b asks on its own, so wait for it.
    await r1!();
    await r1!(); // idempotent
    const r4 = await b.acquire(project);
    expect(r4).not.toBeNull();
    expect(await a.acquire(project)).toBeNull();
    r2!();
    r3!();
    r4!();
  });

  it('a process that dies without releasing frees its slots once they expire; a live one keeps them', async () => {
    const ttl = 900;
    const dying = await connect();
    const dead = new StreamSlots(2, dying, prefix, ttl);
    const live = new StreamSlots(2, await connect(), prefix, ttl);
    const project = randomUUID();
    const kept = await live.acquire(project);
    expect(await dead.acquire(project)).not.toBeNull();
    expect(await live.acquire(project)).toBeNull();
    dying.client.disconnect(); // the process is gone: no release, no heartbeat
    // The live slot is renewed (every ttl/3), the dead one expires.
    const again = await waitFor('the dead slot to expire', () => live.acquire(project), ttl * 20);
    expect(await live.acquire(project)).toBeNull();
    kept!();
    again!();
  });
});
