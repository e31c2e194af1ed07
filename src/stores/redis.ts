import { Redis } from 'ioredis';

/** The shared Redis: its client, and the one way its users wait for an answer. */
export interface SharedRedis {
  readonly client: Redis;
  /** The command's answer, or a RedisTimeoutError once it is overdue (see `answerWithin`). */
  answer<T>(command: Promise<T>): Promise<T>;
}

export class RedisTimeoutError extends Error {
  constructor(ms: number) {
    super(`Redis did not answer within ${ms} ms`);
    this.name = 'RedisTimeoutError';
  }
}

/**
 * A Redis client that fails fast instead of queueing while disconnected: the rate limiter,
 * the stream slots and key-cache invalidation must degrade to in-process behaviour, never stall
 * a request. How long a command may take is `answer`'s, not ioredis's `commandTimeout`: that
 * one is a plain timer, which a loop held past it (a starved CPU) fires before the loop reads
 * the answer already in the socket.
 */
export function openRedis(url: string, commandTimeoutMs = 500): SharedRedis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  // Connection errors surface as failed commands; the 'error' event only needs a listener.
  client.on('error', () => {});
  return sharedRedis(client, commandTimeoutMs);
}

export function sharedRedis(client: Redis, commandTimeoutMs: number): SharedRedis {
  return { client, answer: (command) => answerWithin(command, commandTimeoutMs) };
}

/**
 * `answer`, or a RedisTimeoutError when it has not come `ms` after the call and the loop has
 * read its sockets since. The timer alone would not do: after a loop held past `ms`, timers run
 * before the poll phase that reads the sockets, so it would time out an answer that came in
 * meanwhile. setImmediate's callbacks run after that poll phase, so only an answer still missing
 * then is late.
 */
export function answerWithin<T>(answer: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    // A promise settles once: a rejection after the answer, or an answer after it, is a no-op.
    const timer = setTimeout(() => setImmediate(() => reject(new RedisTimeoutError(ms))), ms);
    answer.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}
