import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { loggableError, type Log, silentLog } from '../lib/log.ts';

export interface LimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/**
 * A fixed-window limit of `points` per minute. Shared through Redis when there is one; when
 * Redis fails the in-process limiter takes over, so a Redis outage never fails a request.
 */
export class RateLimiter {
  private limiter: RateLimiterRedis | RateLimiterMemory;
  /** Requests this process refused (the metrics read it). */
  rejections = 0;

  constructor(
    readonly name: string,
    readonly points: number,
    redis?: Redis,
    redisKeyPrefix = 'flightrec',
    private readonly log: Log = silentLog,
  ) {
    const memory = new RateLimiterMemory({ keyPrefix: `rl:${name}`, points, duration: 60 });
    this.limiter = redis
      ? new RateLimiterRedis({
          storeClient: redis,
          keyPrefix: `${redisKeyPrefix}:rl:${name}`,
          points,
          duration: 60,
          rejectIfRedisNotReady: true,
          insuranceLimiter: memory,
        })
      : memory;
  }

  async consume(key: string): Promise<LimitResult> {
    try {
      const r = await this.limiter.consume(key, 1);
      return this.result(true, r);
    } catch (r) {
      if (r instanceof RateLimiterRes) {
        this.rejections++;
        return this.result(false, r);
      }
      // Neither Redis nor its insurance answered: let the request through rather than fail it.
      this.log.error({ err: loggableError(r), limiter: this.name }, 'rate limiter failed; request let through');
      return { allowed: true, limit: this.points, remaining: this.points, resetSeconds: 60 };
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
