import { describe, expect, it } from 'vitest';
import { crashTimeline, describeEvent } from '../../src/domain/crashTimeline.ts';
import { SOURCE_LIMITS, sourceContext } from '../../src/domain/symbolication/sourceContext.ts';
import { parseSourceMap } from '../../src/domain/symbolication/sourceMaps.ts';
import { release } from '../helpers/bundle.ts';

describe('crash timeline', () => {
  it('merges breadcrumbs and events in time order, leaves out what came after, the crash last', () => {
    const t = crashTimeline(
      [
        { timestamp: 20, category: 'ui.click', message: 'Pay', level: 'info' },
        { timestamp: 50, category: 'late', message: 'x', level: 'info' },
      ],
      [
        { at: 10, type: 'navigate', data: { from: null, to: '/cart' } },
        { at: 20, type: 'network', data: { method: 'POST', url: '/pay', statusCode: 500, error: null } },
        { at: 45, type: 'custom', data: { name: 'after' } },
      ],
      { at: 40, message: 'boom', level: 'fatal' },
    );
    expect(t.map((e) => [e.at, e.source, e.kind, e.message, e.level])).toEqual([
      [10, 'event', 'navigate', '→ /cart', null],
      [20, 'breadcrumb', 'ui.click', 'Pay', 'info'],
      [20, 'event', 'network', 'POST /pay 500', 'error'],
      [40, 'crash', 'crash', 'boom', 'fatal'],
    ]);
  });

  it('describes each event type in one bounded line', () => {
    expect(describeEvent({ at: 0, type: 'tap', data: { x: 1, y: 2, target: null } })).toBe('tap at 1, 2');
    expect(describeEvent({ at: 0, type: 'tap', data: { target: 'Pay' } })).toBe('tap Pay');
    const timedOut = { method: 'GET', url: '/a', statusCode: null, error: 'timeout' };
    expect(describeEvent({ at: 0, type: 'network', data: timedOut })).toBe('GET /a timeout');
    expect(describeEvent({ at: 0, type: 'navigate', data: { to: 'x'.repeat(2000) } })).toHaveLength(501);
  });
});

describe('source lines around mapped frames', () => {
  const rel = release('https://shop.example.com/assets/index-8f3a2c.js', '8f3a2c');
  const map = parseSourceMap(rel.map);
  const mapFor = (p: string) => (p.endsWith('index-8f3a2c.js') ? map : null);

  it('up to 5 lines each side of each mapped frame, its own line included, unmapped frames skipped', () => {
    const frames = sourceContext(`${rel.stack}\n    at other (https://x/y.js:1:1)`, mapFor);
    expect(frames.map((f) => `${f.file}:${f.line}`)).toEqual([
      'src/orders.ts:6',
      'src/orders.ts:12',
      'src/orders.ts:17',
    ]);
    expect(frames[0]!.lines.map((l) => l.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(frames[0]!.lines[5]!.text).toContain('throw new Error');
    expect(frames[2]!.lines.at(-1)!.line).toBe(19);
    expect(frames.every((f) => f.inApp)).toBe(true);
  });

  it('bounds lines in characters and frames in bytes, and marks library frames', () => {
    const wide = JSON.parse(rel.map);
    const widen = (l: string) => l + ' '.repeat(10) + 'y'.repeat(3000);
    wide.sourcesContent = [wide.sourcesContent[0].split('\n').map(widen).join('\n')];

    wide.sources = ['webpack://shop/node_modules/orders/index.ts'];
    const m = parseSourceMap(JSON.stringify(wide));
    const [f] = sourceContext(rel.stack, () => m);
    expect(f!.inApp).toBe(false);
    expect(f!.file).toBe('node_modules/orders/index.ts');
    expect(f!.lines.every((l) => l.text.length <= SOURCE_LIMITS.lineChars + 1)).toBe(true);
    expect(f!.lines.reduce((n, l) => n + Buffer.byteLength(l.text), 0)).toBeLessThanOrEqual(SOURCE_LIMITS.frameBytes);
    expect(f!.lines.some((l) => l.line === 6)).toBe(true);
  });

  it('a map without sourcesContent gives the frame with no lines; at most 10 frames', () => {
    const bare = JSON.parse(rel.map);
    delete bare.sourcesContent;
    const m = parseSourceMap(JSON.stringify(bare));
    const frames = sourceContext(Array.from({ length: 30 }, () => rel.stack.split('\n')[1]).join('\n'), () => m);
    expect(frames).toHaveLength(SOURCE_LIMITS.maxFrames);
    expect(frames[0]!.lines).toEqual([]);
  });
});
