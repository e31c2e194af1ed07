import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyResolver } from '../../src/services/keyResolver.ts';
import { openRedis, sharedRedis } from '../../src/stores/redis.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

/** Deactivates the project's only key through the management API. */
async function deactivateProjectKey(projectId: string) {
  const rows = await (await s.stores()).pg.query<{ id: string }>('SELECT id FROM api_keys WHERE project_id = $1', [
    projectId,
  ]);
  const r = await s.app.inject({ method: 'POST', url: `/api/keys/${rows.rows[0]!.id}/deactivate`, headers: s.admin });
  expect(r.statusCode).toBe(200);
}

/** Polls `other` until it refuses the key; fails past `deadlineMs`. */
const refusedBy = (other: KeyResolver, apiKey: string, deadlineMs: number) =>
  waitFor('the other process to refuse the key', async () => (await other.resolve(apiKey)) === null, deadlineMs);

describe('key deactivation reaches other API processes', () => {
  it('within the 5 s bound through the cache TTL alone (no Redis)', async () => {
    const { apiKey, projectId } = await s.createProject();
    // A second process's resolver: same database, its own cache.
    const other = new KeyResolver(s.svc.projects, s.svc.config.keyCacheTtlMs);
    expect(await other.resolve(apiKey)).not.toBeNull();
    await deactivateProjectKey(projectId);
    // The bound is the cache TTL (≤ 5 s); the deadline leaves a busy machine its slack.
    expect(s.svc.config.keyCacheTtlMs).toBeLessThanOrEqual(5000);
    await refusedBy(other, apiKey, s.svc.config.keyCacheTtlMs + 10_000);
  });

  it.skipIf(!process.env.REDIS_URL)('at once through Redis pub/sub when REDIS_URL is set', async () => {
    const { apiKey, projectId } = await s.createProject();
    const redis = openRedis(process.env.REDIS_URL!);
    // a TTL far longer than the bound, so only the invalidation message can explain a fast refusal
    const other = new KeyResolver(s.svc.projects, 60_000, redis, s.svc.config.redisKeyPrefix);
    await other.start();
    try {
      expect(await other.resolve(apiKey)).not.toBeNull();
      await deactivateProjectKey(projectId);
      // Well before the 60 s TTL: the message, not the expiry.
      await refusedBy(other, apiKey, 20_000);
    } finally {
      await other.stop();
      redis.client.disconnect();
    }
  });
});

describe('a lost invalidation is logged, not swallowed', () => {
  it('a deactivation that cannot be published says so (other processes then wait for the TTL)', async () => {
    const { Redis } = await import('ioredis');
    // A Redis nobody listens on, that fails a command at once instead of queueing it.
    const redis = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    const logged: { obj: object; msg?: string }[] = [];
    const log = { info() {}, warn() {}, error: (obj: object, msg?: string) => logged.push({ obj, msg }) };
    const resolver = new KeyResolver(s.svc.projects, 60_000, sharedRedis(redis, 500), 'flightrec-test', log);
    try {
      await resolver.invalidate('0'.repeat(64));
      expect(logged).toEqual([
        {
          obj: { err: expect.objectContaining({ message: expect.any(String) }) },
          msg: expect.stringMatching(/^key deactivation not published/),
        },
      ]);
    } finally {
      redis.disconnect();
    }
  });
});
