import type { Redis } from 'ioredis';
import { hashApiKey, isWellFormedApiKey } from '../domain/apiKey.ts';
import type { KeyRecord } from '../repos/apiKeys.ts';
import { loggableError, type Log, silentLog } from '../lib/log.ts';
import { BoundedMap } from '../lib/boundedMap.ts';
import type { SharedRedis } from '../stores/redis.ts';

/** Where keys are looked up by hash (the projects service). */
export interface KeyLookup {
  findKeyByHash(keyHash: string): Promise<KeyRecord | null>;
}

const MAX_ENTRIES = 50_000;

interface Entry {
  record: KeyRecord | null;
  expires: number;
}

/**
 * Resolves an API key to its project, with a short-lived cache. Deactivation reaches every
 * process within the cache TTL (<= 5 s) even with no Redis; with Redis, a published
 * invalidation drops the entry everywhere at once.
 */
export class KeyResolver {
  private cache = new BoundedMap<string, Entry>(MAX_ENTRIES);
  private subscriber: Redis | undefined;

  constructor(
    private readonly repo: KeyLookup,
    private readonly ttlMs: number,
    private readonly redis?: SharedRedis,
    redisKeyPrefix = 'flightrec',
    private readonly log: Log = silentLog,
  ) {
    this.channel = `${redisKeyPrefix}:key-invalidated`;
  }

  private readonly channel: string;

  async start(): Promise<void> {
    if (!this.redis) return;
    this.subscriber = this.redis.client.duplicate({ enableOfflineQueue: true });
    // ioredis reconnects by itself; while it is away, deactivations reach this process through
    // the cache TTL. Said once per outage, not once per reconnection attempt.
    let down = false;
    this.subscriber.on('error', (err: unknown) => {
      if (!down)
        this.log.warn(
          { err: loggableError(err) },
          'key invalidations: Redis unreachable; deactivations arrive within the cache TTL until it returns',
        );
      down = true;
    });
    this.subscriber.on('ready', () => {
      if (down) this.log.info({}, 'key invalidations: Redis is back');
      down = false;
    });
    this.subscriber.on('message', (_channel: string, keyHash: string) => this.cache.delete(keyHash));
    await this.redis.answer(this.subscriber.subscribe(this.channel)).catch((err: unknown) => {
      this.log.error(
        { err: loggableError(err) },
        "key invalidations not subscribed: other processes' deactivations arrive within the cache TTL only",
      );
    });
  }

  async stop(): Promise<void> {
    this.subscriber?.disconnect();
  }

  /** The active key's record, or null for a malformed, unknown or deactivated key. */
  async resolve(apiKey: string): Promise<KeyRecord | null> {
    if (!isWellFormedApiKey(apiKey)) return null;
    const keyHash = hashApiKey(apiKey);
    const now = Date.now();
    const hit = this.cache.get(keyHash);
    let record: KeyRecord | null;
    if (hit && hit.expires > now) {
      record = hit.record;
    } else {
      record = await this.repo.findKeyByHash(keyHash);
      this.cache.set(keyHash, { record, expires: now + this.ttlMs });
    }
    return record?.active ? record : null;
  }

  /** Drops a key from this process's cache and tells the others. */
  async invalidate(keyHash: string): Promise<void> {
    this.cache.delete(keyHash);
    if (!this.redis) return;
    await this.redis.answer(this.redis.client.publish(this.channel, keyHash)).catch((err: unknown) => {
      this.log.error(
        { err: loggableError(err) },
        'key deactivation not published: other processes drop the key within the cache TTL only',
      );
    });
  }
}
