import { describe, expect, it } from 'vitest';
import {
  eventBatches,
  keyValuePersistence,
  memoryPersistence,
  pageHandoffPersistence,
  sessionEndBatch,
  sessionStartBatch,
  type SdkEvent,
} from '../src/index.ts';

const sid = '0b7a5a2e-7d0e-4c57-9d8e-2f3a1b4c5d6e';
const batches = [
  sessionStartBatch({ sessionId: sid, device: { platform: 'linux' }, startedAt: 1 }),
  ...eventBatches(sid, [
    { type: 'custom', name: 'n', properties: {}, sessionId: sid, timestamp: 2, sequenceNumber: 0 } satisfies SdkEvent,
  ]),
];

/** localStorage's shape over a Map. */
function memoryStorage() {
  const map = new Map<string, string>();
  return {
    map,
    getItem: (k: string) => map.get(k) ?? null,
    setItem: (k: string, v: string) => void map.set(k, v),
    removeItem: (k: string) => void map.delete(k),
  };
}

describe('persistent queues', () => {
  it('keyValuePersistence round-trips batches through localStorage-shaped storage', async () => {
    const map = new Map<string, string>();
    const p = keyValuePersistence({ getItem: (k) => map.get(k) ?? null, setItem: (k, v) => void map.set(k, v) });
    expect(await p.load()).toEqual([]);
    await p.save(batches);
    expect([...map.keys()]).toEqual(['flightrec.queue']);
    expect(await p.load()).toEqual(batches);
  });

  it('keyValuePersistence works with AsyncStorage-shaped storage and skips entries that are not batches', async () => {
    const map = new Map<string, string>();
    const p = keyValuePersistence(
      { getItem: async (k) => map.get(k) ?? null, setItem: async (k, v) => void map.set(k, v) },
      'q',
    );
    map.set('q', JSON.stringify([{ junk: true }, batches[1]]));
    expect(await p.load()).toEqual([batches[1]]);
  });

  it('memoryPersistence hands back copies', async () => {
    const p = memoryPersistence();
    await p.save(batches);
    const loaded = await p.load();
    loaded.pop();
    expect(await p.load()).toHaveLength(2);
  });

  it('keyValuePersistence merges: a save replaces only what this instance loaded or saved', async () => {
    const storage = memoryStorage();
    const map = storage.map;
    const a = keyValuePersistence(storage);
    const b = keyValuePersistence(storage);
    await a.save(batches);
    await b.save([sessionEndBatch(sid, 3)]);
    expect(JSON.parse(map.get('flightrec.queue')!)).toHaveLength(3);
    await a.save([batches[1]!]); // A's start arrived: only that leaves
    const kinds = (JSON.parse(map.get('flightrec.queue')!) as { kind: string }[]).map((x) => x.kind);
    expect(kinds.sort()).toEqual(['events', 'sessionEnd']);
  });

  it('a held batch is left to its living owner; its own next load, or anyone after the lease, takes it', async () => {
    const storage = memoryStorage();
    const map = storage.map;
    const held = batches.map((b) => ({ ...b, hold: { owner: 'tab-a', until: 1000 } }));
    const free = sessionEndBatch('9b7a5a2e-7d0e-4c57-9d8e-2f3a1b4c5d6e', 5);
    const page = pageHandoffPersistence(storage, 'k');
    page.handOff([...held, free]);
    expect(await page.load({ owner: 'tab-b', now: 999 })).toEqual([free]);
    expect(await page.load({ owner: 'tab-b', now: 999 })).toEqual([]);
    expect(await page.load({ owner: 'tab-a', now: 999 })).toEqual(held);
    page.handOff(held);
    expect(await page.load({ owner: 'tab-b', now: 1000 })).toEqual(held);
    expect(map.has('k')).toBe(false);

    const kv = keyValuePersistence(storage, 'kv');
    await kv.save(held);
    expect(await keyValuePersistence(storage, 'kv').load({ owner: 'tab-b', now: 999 })).toEqual([]);
    expect(await keyValuePersistence(storage, 'kv').load({ owner: 'tab-b', now: 1001 })).toEqual(held);
  });

  it("a hand-off replaces the same page's earlier one and reclaim removes what arrived", async () => {
    const storage = memoryStorage();
    const page = pageHandoffPersistence(storage, 'k');
    const provisional = sessionEndBatch(sid, 2);
    page.handOff([...batches, provisional]);
    const end = sessionEndBatch(sid, 9);
    page.handOff([...batches, end], new Set([...batches, provisional].map((b) => b.id)));
    page.reclaim(new Set([batches[0]!.id]));
    expect(await page.load()).toEqual([batches[1], end]);
  });
});
