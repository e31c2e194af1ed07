// Where unsent batches live between app runs. The client saves the whole list of sealed,
// unsent batches after each change (coalesced) and loads it once at start-up.
import type { Batch } from './types.js';

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

/** `localStorage`, as far as the hand-over uses it. */
export interface PageStorage extends KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** A queue that is handed over at page exit instead of saved while the page lives. */
export interface HandOffQueue extends PersistentQueue {
  /** Adds `batches` to what the next page load of this origin will send (synchronous). */
  handOff(batches: Batch[]): void;
  /** Takes back the batches of these ids (a page restored from the back/forward cache still has them). */
  reclaim(ids: ReadonlySet<string>): void;
}

/**
 * The browser default: what a page could not send before it went (pagehide) is handed over in
 * `localStorage` under `key`, and the next page load of the origin takes it (and removes it).
 * Nothing is written while the page lives, so tabs never take each other's live queue: several
 * tabs leaving add up under the one key, and whichever page loads next sends it all (the
 * service collapses anything sent twice).
 */
export function pageHandoffPersistence(storage: PageStorage, key: string): HandOffQueue {
  const read = (): Batch[] => {
    try {
      const raw = storage.getItem(key);
      const parsed: unknown = raw ? JSON.parse(raw) : [];
      return Array.isArray(parsed) ? parsed.filter(isBatch) : [];
    } catch {
      return [];
    }
  };
  const write = (batches: Batch[]) => {
    if (batches.length) storage.setItem(key, JSON.stringify(batches));
    else storage.removeItem(key);
  };
  return {
    async load() {
      const batches = read();
      storage.removeItem(key);
      return batches;
    },
    async save() {
      // nothing while the page lives: see handOff
    },
    handOff(batches) {
      if (!batches.length) return;
      const stored = read();
      const ids = new Set(stored.map((b) => b.id));
      write([...stored, ...batches.filter((b) => !ids.has(b.id))]);
    },
    reclaim(ids) {
      const stored = read();
      const rest = stored.filter((b) => !ids.has(b.id));
      if (rest.length !== stored.length) write(rest);
    },
  };
}
