// Where unsent batches live between app runs. The client saves the whole list of sealed,
// unsent batches after each change (coalesced) and loads it once at start-up.
import type { Batch } from './types.ts';

export interface PersistentQueue {
  load(): Promise<Batch[]>;
  save(batches: Batch[]): Promise<void>;
}

/**
 * The default: keeps batches for the life of the process only. Handing the same instance to a
 * new client (after `shutdown()` of the old one) resumes its unsent batches.
 */
export function memoryPersistence(): PersistentQueue & { readonly batches: readonly Batch[] } {
  let stored: Batch[] = [];
  return {
    get batches() {
      return stored;
    },
    async load() {
      return stored.slice();
    },
    async save(batches) {
      stored = batches.slice();
    },
  };
}

/** A key/value store with the shape of `localStorage` or React Native's `AsyncStorage`. */
export interface KeyValueStorage {
  getItem(key: string): string | null | Promise<string | null>;
  setItem(key: string, value: string): void | Promise<void>;
}

/** Persists batches as one JSON value under `key` (default `flightrec.queue`). */
export function keyValuePersistence(storage: KeyValueStorage, key = 'flightrec.queue'): PersistentQueue {
  return {
    async load() {
      const raw = await storage.getItem(key);
      if (!raw) return [];
      const parsed: unknown = JSON.parse(raw);
      return Array.isArray(parsed) ? parsed.filter(isBatch) : [];
    },
    async save(batches) {
      await storage.setItem(key, JSON.stringify(batches));
    },
  };
}

function isBatch(x: unknown): x is Batch {
  const b = x as Batch;
  return typeof b === 'object' && b !== null && typeof b.id === 'string' && typeof b.path === 'string'
    && typeof b.body === 'string' && typeof b.items === 'number' && typeof b.kind === 'string';
}
