import { BoundedMap } from '../lib/boundedMap.ts';

/**
 * A per-project read the crash path makes on every crash, kept `ms` per process: this process's
 * edits `forget` their entry at once, another process's show within `ms`. A failed read is not
 * kept, so the next crash asks again.
 */
export function ttlCache<T>(ms: number, load: (key: string) => Promise<T>, max = 10_000) {
  const cache = new BoundedMap<string, { at: number; value: Promise<T> }>(max);
  return {
    get(key: string): Promise<T> {
      const hit = cache.get(key);
      if (hit && Date.now() - hit.at < ms) return hit.value;
      const value = load(key);
      cache.set(key, { at: Date.now(), value });
      value.catch(() => cache.delete(key));
      return value;
    },
    forget(key: string): void {
      cache.delete(key);
    },
  };
}
