import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './errors.ts';
import type { RateLimiter } from '../services/rateLimiter.ts';

/** onRequest hook (after auth): the limit per API key, per IP, or per signed-in user. */
export function rateLimit(limiter: RateLimiter, by: 'key' | 'ip' | 'user' = 'key') {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const r = await limiter.consume(by === 'key' ? req.keyId : by === 'user' ? `user:${req.user.id}` : req.ip);
    reply.header('RateLimit-Limit', r.limit);
    reply.header('RateLimit-Remaining', r.remaining);
    reply.header('RateLimit-Reset', r.resetSeconds);
    if (!r.allowed) {
      throw new HttpError(429, `Rate limit of ${r.limit} requests per minute exceeded`, undefined, {
        'retry-after': String(r.resetSeconds),
      });
    }
  };
}
