import { randomUUID } from 'node:crypto';
import type { SharedRedis } from '../stores/redis.ts';

/** How long a slot outlives its last heartbeat: a process that died frees its slots after this. */
const SLOT_TTL_MS = 30_000;

// One project's open streams: a sorted set of slot ids scored by when each expires. Expired
// slots are dropped, then a new one is added only under the cap; all in one atomic script,
// on Redis's own clock so the processes' clocks need not agree.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1`;

const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1`;

/**
 * At most `max` streamed exports at once per project. A stream holds connections, buffers and
 * the store for as long as its client reads; without a cap one key could open dozens and
 * starve the others. With Redis the cap is shared by every API process (a slot is a member of
 * the project's sorted set, renewed while its stream runs and expiring 30 s after its process
 * stops renewing it); without Redis, or while Redis does not answer, it is counted in this process.
 */
export class StreamSlots {
  private readonly active = new Map<string, number>();

  constructor(
    readonly max: number,
    private readonly redis?: SharedRedis,
    private readonly keyPrefix = 'flightrec',
    private readonly ttlMs = SLOT_TTL_MS,
  ) {}

  /**
   * A release function (idempotent), or null when the project has `max` streams open. The
   * release frees this process's count at once; its promise settles when the shared slot is
   * gone too, since another process asks Redis on a connection of its own.
   */
  async acquire(projectId: string): Promise<(() => Promise<void>) | null> {
    const n = this.active.get(projectId) ?? 0;
    if (n >= this.max) return null;
    const shared = this.redis ? await this.acquireShared(this.redis, projectId) : undefined;
    if (shared === null) return null;
    this.active.set(projectId, (this.active.get(projectId) ?? 0) + 1);
    let done: Promise<void> | undefined;
    return () => {
      if (done) return done;
      done = shared ? shared() : Promise.resolve();
      const left = (this.active.get(projectId) ?? 1) - 1;
      if (left <= 0) this.active.delete(projectId);
      else this.active.set(projectId, left);
      return done;
    };
  }

  /** Streams open for the project in this process. */
  openFor(projectId: string): number {
    return this.active.get(projectId) ?? 0;
  }

  /**
   * The shared slot: its release, null when every slot is taken, undefined when Redis did not
   * answer (then only this process's count applies, as the rate limiter falls back).
   */
  private async acquireShared(
    redis: SharedRedis,
    projectId: string,
  ): Promise<(() => Promise<void>) | null | undefined> {
    const key = `${this.keyPrefix}:streams:${projectId}`;
    const slot = randomUUID();
    try {
      const ok = await redis.answer(redis.client.eval(ACQUIRE, 1, key, this.max, slot, this.ttlMs));
      if (Number(ok) !== 1) return null;
    } catch {
      return undefined;
    }
    const beat = setInterval(
      () => {
        redis.client.eval(RENEW, 1, key, slot, this.ttlMs).catch(() => {});
      },
      Math.floor(this.ttlMs / 3),
    );
    beat.unref();
    return () => {
      clearInterval(beat);
      return redis.answer(redis.client.zrem(key, slot)).then(
        () => {},
        () => {},
      );
    };
  }
}
