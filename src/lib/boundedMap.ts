/**
 * A Map of at most `max` entries, for the per-process caches: adding one more drops the oldest
 * (by first insertion; replacing a value keeps its place). Memory stays bounded whatever the
 * traffic, and an evicted entry only costs a lookup in the store it came from.
 */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();

  constructor(readonly max: number) {}

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): this {
    if (!this.map.has(key) && this.map.size >= this.max) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
    this.map.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  keys(): IterableIterator<K> {
    return this.map.keys();
  }
}
