import { Redis } from 'ioredis';

/**
 * A Redis client that fails fast instead of queueing while disconnected: the rate limiter and
 * key-cache invalidation must degrade to in-process behaviour, never stall a request.
 */
export function openRedis(url: string): Redis {
  const r = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    commandTimeout: 500,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  // Connection errors surface as failed commands; the 'error' event only needs a listener.
  r.on('error', () => {});
  return r;
}
