// Where unsent batches live between app runs (and, in a browser, between page loads and tabs).
// The client saves the list of unsent batches after each change (coalesced) and loads it once
// at start-up.
import type { Batch } from './types.js';

/** Who is loading: a stored batch held by another owner that is still alive is left alone. */
export interface LoadContext {
  owner: string;
  now: number;
}

export interface PersistentQueue {
  load(ctx?: LoadContext): Promise<Batch[]>;
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

/**
 * May the loader take `b`: not held, held by the loader itself (the same tab's next page load,
 * the same app's next launch), or held by an owner that stopped renewing it.
 */
export function takeable(b: Batch, ctx: LoadContext | undefined): boolean {
  const h = b.hold;
  if (!h || !ctx) return true;
  return h.owner === ctx.owner || !(h.until > ctx.now);
}

function parseBatches(raw: string | null): Batch[] {
  if (!raw) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.filter(isBatch) : [];
  } catch {
    return [];
  }
}

/**
 * Persists batches as one JSON value under `key` (default `flightrec.queue`). Saves merge: a
 * save replaces what this instance loaded or saved before and keeps everything else under the
 * key (another tab's or client's batches), so two writers never erase each other's queue.
 * What another writer still holds (see `Batch.hold`) is not loaded.
 */
export function keyValuePersistence(storage: KeyValueStorage, key = 'flightrec.queue'): PersistentQueue {
  /** Ids this instance is responsible for: what it took at load and what it saved since. */
  let mine = new Set<string>();
  return {
    async load(ctx) {
      const taken = parseBatches(await storage.getItem(key)).filter((b) => takeable(b, ctx));
      for (const b of taken) mine.add(b.id);
      return taken;
    },
    async save(batches) {
      const others = parseBatches(await storage.getItem(key)).filter((b) => !mine.has(b.id));
      const ids = new Set(batches.map((b) => b.id));
      await storage.setItem(key, JSON.stringify([...others.filter((b) => !ids.has(b.id)), ...batches]));
      mine = ids;
    },
  };
}

function isBatch(x: unknown): x is Batch {
  const b = x as Batch;
  return (
    typeof b === 'object' &&
    b !== null &&
    typeof b.id === 'string' &&
    typeof b.path === 'string' &&
    typeof b.body === 'string' &&
    typeof b.items === 'number' &&
    typeof b.kind === 'string'
  );
}

/** `localStorage`, as far as the hand-over uses it. */
export interface PageStorage extends KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** A queue that is handed over at page exit instead of saved while the page lives. */
export interface HandOffQueue extends PersistentQueue {
  /**
   * Adds `batches` to what the next page load of this origin will send (synchronous), in place
   * of the batches of the ids in `replacing` (this page's earlier hand-off).
   */
  handOff(batches: Batch[], replacing?: ReadonlySet<string>): void;
  /**
   * Takes back the batches of these ids: a page restored from the back/forward cache still has
   * them, and a batch known to have arrived needs no second sending.
   */
  reclaim(ids: ReadonlySet<string>): void;
}

/**
 * The browser default: what a page could not send (or could not yet know to have arrived) is
 * handed over in `localStorage` under `key` when the page is hidden or left, and the next page
 * load of the origin takes it. Nothing is written while the page is shown. Tabs never take each
 * other's live queue: what a hidden tab hands over is held by that tab (`Batch.hold`) and left
 * alone until it is gone (it stopped renewing the hold) or by the same tab's next page load;
 * what a page hands over as it is left is anyone's, and the service collapses what is sent twice.
 */
export function pageHandoffPersistence(storage: PageStorage, key: string): HandOffQueue {
  const read = (): Batch[] => {
    try {
      return parseBatches(storage.getItem(key));
    } catch {
      return [];
    }
  };
  const write = (batches: Batch[]) => {
    if (batches.length) storage.setItem(key, JSON.stringify(batches));
    else storage.removeItem(key);
  };
  return {
    async load(ctx) {
      const stored = read();
      const taken = stored.filter((b) => takeable(b, ctx));
      if (taken.length) write(stored.filter((b) => !takeable(b, ctx)));
      return taken;
    },
    async save() {
      // nothing while the page lives: see handOff
    },
    handOff(batches, replacing) {
      const ids = new Set(batches.map((b) => b.id));
      const stored = read();
      const rest = stored.filter((b) => !ids.has(b.id) && !replacing?.has(b.id));
      if (!batches.length && rest.length === stored.length) return;
      write([...rest, ...batches]);
    },
    reclaim(ids) {
      const stored = read();
      const rest = stored.filter((b) => !ids.has(b.id));
      if (rest.length !== stored.length) write(rest);
    },
  };
}
