import { describe, expect, it } from 'vitest';
import { eventBatches, keyValuePersistence, memoryPersistence, sessionStartBatch, type SdkEvent } from '../src/index.ts';

const sid = '0b7a5a2e-7d0e-4c57-9d8e-2f3a1b4c5d6e';
const batches = [
  sessionStartBatch({ sessionId: sid, device: { platform: 'linux' }, startedAt: 1 }),
  ...eventBatches(sid, [{ type: 'custom', name: 'n', properties: {}, sessionId: sid, timestamp: 2, sequenceNumber: 0 } satisfies SdkEvent]),
];

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
    const p = keyValuePersistence({ getItem: async (k) => map.get(k) ?? null, setItem: async (k, v) => void map.set(k, v) }, 'q');
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
});
