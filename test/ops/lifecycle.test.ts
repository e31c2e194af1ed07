import { describe, expect, it } from 'vitest';
import { Lifecycle, type Part } from '../../src/lib/lifecycle.ts';

/** A part that writes what happens to it into `events`. */
const part = (name: string, events: string[], fail?: 'start' | 'stop'): Part => ({
  name,
  start() {
    if (fail === 'start') throw new Error(`${name} cannot start`);
    events.push(`start ${name}`);
  },
  async stop() {
    events.push(`stop ${name}`);
    if (fail === 'stop') throw new Error(`${name} cannot stop`);
  },
});

describe('lifecycle (src/lib/lifecycle.ts)', () => {
  it('starts parts in order and stops them in reverse, once however often stop is called', async () => {
    const events: string[] = [];
    const l = new Lifecycle().add(part('stores', events)).add(part('batchers', events)).add(part('spool', events));
    await l.start();
    l.add(part('http', events));
    await Promise.all([l.stop(), l.stop()]);
    expect(events).toEqual([
      'start stores',
      'start batchers',
      'start spool',
      'stop http',
      'stop spool',
      'stop batchers',
      'stop stores',
    ]);
  });

  it('a part that fails to stop does not keep the others open; its error comes out at the end', async () => {
    const events: string[] = [];
    const l = new Lifecycle()
      .add(part('stores', events))
      .add(part('worker', events, 'stop'))
      .add(part('spool', events));
    await l.start();
    await expect(l.stop()).rejects.toThrow('worker cannot stop');
    expect(events.slice(3)).toEqual(['stop spool', 'stop worker', 'stop stores']);
  });

  it('a part that fails to start stops everything added, and the error is thrown', async () => {
    const events: string[] = [];
    const l = new Lifecycle()
      .add(part('stores', events))
      .add(part('worker', events, 'start'))
      .add(part('spool', events));
    await expect(l.start()).rejects.toThrow('worker cannot start');
    expect(events).toEqual(['start stores', 'stop spool', 'stop worker', 'stop stores']);
    await expect(l.start()).rejects.toThrow('already stopped');
  });
});
