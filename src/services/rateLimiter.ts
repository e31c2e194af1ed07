import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { loggableError, type Log, silentLog } from '../lib/log.ts';
import type { SharedRedis } from '../stores/redis.ts';

export interface LimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

interface SharedLimiter {
  limiter: RateLimiterRedis;
  redis: SharedRedis;
}

/**
 * A fixed-window limit of `points` per minute. Shared through Redis when there is one; when a
 * Redis command fails (down, not yet connected, or past its timeout) this process's own limiter
 * counts that request, so a Redis outage never fails a request. Counted that way, a limit is
 * per process: `redisFallbacks` (a metric) and a warning at most once a minute say so.
 */
export class RateLimiter {
  private readonly memory: RateLimiterMemory;
  private readonly shared: SharedLimiter | undefined;
  /** Requests this process refused (the metrics read it). */
  rejections = 0;
  /** Requests counted in process because Redis did not answer (the metrics read it). */
  redisFallbacks = 0;
  private lastWarnedAt = 0;

  constructor(
    readonly name: string,
    readonly points: number,
    redis?: SharedRedis,
    redisKeyPrefix = 'flightrec',
    private readonly log: Log = silentLog,
  ) {
    this.memory = new RateLimiterMemory({ keyPrefix: `rl:${name}`, points, duration: 60 });
    this.shared = redis && {
      redis,
      limiter: new RateLimiterRedis({
        storeClient: redis.client,
        keyPrefix: `${redisKeyPrefix}:rl:${name}`,
        points,
        duration: 60,
        rejectIfRedisNotReady: true,
      }),
    };
  }

  async consume(key: string): Promise<LimitResult> {
    try {
      const r = this.shared ? await this.consumeShared(this.shared, key) : await this.memory.consume(key, 1);
      return this.result(true, r);
    } catch (r) {
      if (r instanceof RateLimiterRes) {
        this.rejections++;
        return this.result(false, r);
      }
      // Not even the in-process limiter answered: let the request through rather than fail it.
      this.log.error({ err: loggableError(r), limiter: this.name }, 'rate limiter failed; request let through');
      return { allowed: true, limit: this.points, remaining: this.points, resetSeconds: 60 };
    }
  }

  private async consumeShared(shared: SharedLimiter, key: string): Promise<RateLimiterRes> {
    try {
      return await shared.redis.answer(shared.limiter.consume(key, 1));
    } catch (err) {
      if (err instanceof RateLimiterRes) throw err;
      this.redisFallbacks++;
      const now = Date.now();
      if (now - this.lastWarnedAt >= 60_000) {
        this.lastWarnedAt = now;
        this.log.warn(
          { err: loggableError(err), limiter: this.name, fallbacks: this.redisFallbacks },
          'Redis did not answer the rate limiter; counting in this process',
        );
      }
      return this.memory.consume(key, 1);
    }
  }

  private result(allowed: boolean, r: RateLimiterRes): LimitResult {
    return {
      allowed,
      limit: this.points,
      remaining: Math.max(0, r.remainingPoints),
      resetSeconds: Math.max(1, Math.ceil(r.msBeforeNext / 1000)),
    };
  }
}
