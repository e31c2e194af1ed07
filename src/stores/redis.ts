import { Redis } from 'ioredis';

/**
 * A Redis client that fails fast instead of queueing while disconnected: the rate limiter and
 * key-cache invalidation must degrade to in-process behaviour, never stall a request.
 *
 * The command timeout is a timer on this process's event loop: a loop held longer than it (a
 * starved CPU) times out a command whose answer is already in the socket, so the limiter counts
 * that request in process. REDIS_COMMAND_TIMEOUT_MS trades that against how long a request waits
 * on a Redis that stopped answering.
 */
export function openRedis(url: string, commandTimeoutMs = 500): Redis {
  const r = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    commandTimeout: commandTimeoutMs,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  // Connection errors surface as failed commands; the 'error' event only needs a listener.
  r.on('error', () => {});
  return r;
}
