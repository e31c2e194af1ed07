import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MAPPING, SOURCE, release } from '../helpers/bundle.ts';
import { crashGroupKey } from '../../src/domain/crashGrouping.ts';
import {
  symbolicate,
  jsFilesOf,
  mapNameFor,
  parseSourceMap,
  parseProguardMapping,
  sourceMappingUrl,
} from '../../src/domain/symbolication/index.ts';
import { nameMatchScore, parseJsFrame, framePath } from '../../src/domain/symbolication/jsFrames.ts';
import { retraceFrame } from '../../src/domain/symbolication/retrace.ts';

describe('JavaScript source maps', () => {
  const url = 'https://shop.example.com/assets/index-8f3a2c.js';
  const r = release(url, '8f3a2c');

  it('a minified V8 stack maps back to the original file, line, column and function names', () => {
    expect(r.stack).toMatch(/index-8f3a2c\.js:1:\d+/);
    const map = parseSourceMap(r.map);
    const out = symbolicate(r.stack, 'Error: Order 1042 not found', {
      jsMapFor: (p) => (p === '/assets/index-8f3a2c.js' ? map : null),
    });
    const lines = out.stack.split('\n');
    expect(lines[0]).toBe('Error: Order 1042 not found');
    // the throw is on line 6 of src/orders.ts, inside findOrder; its caller loadOrder on line 12
    expect(lines[1]).toMatch(/^ {4}at findOrder \(src\/orders\.ts:6:\d+\)$/);
    expect(lines[2]).toMatch(/^ {4}at loadOrder \(src\/orders\.ts:12:\d+\)$/);
    // checkout's caller (the page's inline script) has no map: no original name is known, and the
    // minified one is never shown (it changes with every build): the frame is its file and line
    expect(lines[3]).toMatch(/^ {4}at src\/orders\.ts:17:\d+$/);
    expect(out.mapped).toBeGreaterThanOrEqual(3);
  });

  it('a TypeScript build (tsc --sourceMap) maps lines back too, and Firefox frames keep their syntax', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-tsc-'));
    fs.mkdirSync(path.join(dir, 'src'));
    fs.writeFileSync(path.join(dir, 'src/orders.ts'), SOURCE);
    execFileSync(
      path.resolve('node_modules/.bin/tsc'),
      [
        '--sourceMap',
        '--target',
        'es2020',
        '--module',
        'es2020',
        '--outDir',
        'dist',
        '--rootDir',
        '.',
        'src/orders.ts',
      ],
      { cwd: dir },
    );
    const js = fs.readFileSync(path.join(dir, 'dist/src/orders.js'), 'utf8').split('\n');
    const map = parseSourceMap(fs.readFileSync(path.join(dir, 'dist/src/orders.js.map'), 'utf8'));
    fs.rmSync(dir, { recursive: true });
    const jsLine = js.findIndex((l) => l.includes('throw new Error')) + 1;
    const col = js[jsLine - 1]!.indexOf('throw') + 1;
    const out = symbolicate(
      `findOrder@app:///dist/src/orders.js:${jsLine}:${col}\n@app:///dist/src/orders.js:1:1`,
      '',
      { jsMapFor: () => map },
    );
    expect(out.stack.split('\n')[0]).toBe('findOrder@src/orders.ts:6:5');
  });

  it("finds a frame's map by the minified source's sourceMappingURL, or by name + .map, by path suffix, ~/ prefix or base name", () => {
    expect(sourceMappingUrl(r.code)).toBe('index-8f3a2c.js.map');
    const artifacts = [
      { name: '~/assets/index-8f3a2c.js', kind: 'minified' as const },
      { name: 'maps/index-8f3a2c.js.map', kind: 'sourcemap' as const },
      { name: 'other.js.map', kind: 'sourcemap' as const },
    ];
    const path = framePath(`${url}?v=3`);
    expect(path).toBe('/assets/index-8f3a2c.js');
    expect(mapNameFor(path, artifacts, () => '../maps/index-8f3a2c.js.map')).toBe('maps/index-8f3a2c.js.map');
    expect(mapNameFor(path, [{ name: '~/assets/index-8f3a2c.js.map', kind: 'sourcemap' }])).toBe(
      '~/assets/index-8f3a2c.js.map',
    );
    expect(mapNameFor(path, [{ name: 'index-8f3a2c.js.map', kind: 'sourcemap' }])).toBe('index-8f3a2c.js.map');
    expect(mapNameFor(path, [{ name: 'index-b71d09.js.map', kind: 'sourcemap' }])).toBeNull();
    expect(nameMatchScore('~/static/js/main.js.map', '/static/js/main.js.map')).toBe(3);
    expect(nameMatchScore('js/main.js.map', '/static/other/main.js.map')).toBe(0);
    expect(jsFilesOf(r.stack)).toContain('/assets/index-8f3a2c.js');
  });

  it('Hermes (React Native), Electron and Node frames parse to the bundle path', () => {
    expect(
      parseJsFrame(
        '    at anonymous (address at /data/app/~~x==/com.shop-y==/base.apk!/assets/index.android.bundle:1:1234)',
      ),
    ).toMatchObject({ fn: 'anonymous', line: 1, column: 1234 });
    expect(framePath('app:///dist/main.js')).toBe('/dist/main.js');
    expect(parseJsFrame('global code@https://a.b/assets/index-8f3a2c.js:1:99')).toMatchObject({
      style: 'gecko',
      fn: 'global code',
      line: 1,
      column: 99,
    });
    expect(framePath('file:///C:/Program%20Files/Shop/resources/app.asar/dist/main.js')).toBe(
      '/C:/Program Files/Shop/resources/app.asar/dist/main.js',
    );
    expect(
      nameMatchScore(
        'index.android.bundle.map',
        `${framePath('/data/app/x/base.apk!/assets/index.android.bundle')}.map`,
      ),
    ).toBe(1);
    expect(parseJsFrame('    at Object.<anonymous> (/srv/app/dist/server.js:12:5)')).toMatchObject({
      fn: 'Object.<anonymous>',
      file: '/srv/app/dist/server.js',
      line: 12,
      column: 5,
    });
  });

  it("Hermes frames that name no file (fn@1:offset) read the release's bundle map", () => {
    // the same positions as the V8 stack, as Hermes prints them without a source URL
    const hermes = r.stack
      .split('\n')
      .slice(1, 4)
      .map((l) => /at (\S+) \(.*?:(\d+):(\d+)\)/.exec(l)!)
      .map((m) => `${m[1]}@${m[2]}:${m[3]}`)
      .join('\n');
    expect(parseJsFrame(hermes.split('\n')[0]!)).toMatchObject({ implicitFile: true, line: 1 });
    expect(jsFilesOf(hermes)).toEqual(['']);
    const name = mapNameFor('', [
      { name: 'index.android.bundle.map', kind: 'sourcemap' },
      { name: 'other.js.map', kind: 'sourcemap' },
    ]);
    expect(name).toBe('index.android.bundle.map');
    const out = symbolicate(hermes, '', { jsMapFor: (p) => (p === '' ? parseSourceMap(r.map) : null) }).stack.split(
      '\n',
    );
    expect(out[0]).toMatch(/^findOrder@src\/orders\.ts:6:\d+$/);
    expect(out[1]).toMatch(/^loadOrder@src\/orders\.ts:12:\d+$/);
  });

  it('a React Native map with x_facebook_sources, or an indexed (sectioned) map, is read', () => {
    const base = JSON.parse(r.map) as Record<string, unknown>;
    const withFb = { ...base, x_facebook_sources: [[{ names: ['<global>'], mappings: 'AAA' }]] };
    expect(() => parseSourceMap(JSON.stringify(withFb))).not.toThrow();
    const indexed = { version: 3, sections: [{ offset: { line: 0, column: 0 }, map: base }] };
    const stack = symbolicate(r.stack, '', { jsMapFor: () => parseSourceMap(JSON.stringify(indexed)) }).stack;
    expect(stack).toContain('src/orders.ts:6:');
    expect(() => parseSourceMap('{"version":2}')).toThrow();
  });

  it('the same bug from two rebuilt bundles is one group before symbolication, and one after', () => {
    const other = release('https://shop.example.com/assets/index-b71d09.js', 'b71d09');
    expect(crashGroupKey(other.stack)).toBe(crashGroupKey(r.stack));
    const a = symbolicate(r.stack, '', { jsMapFor: () => parseSourceMap(r.map) }).stack;
    const b = symbolicate(other.stack, '', { jsMapFor: () => parseSourceMap(other.map) }).stack;
    expect(crashGroupKey(a)).toBe(crashGroupKey(b));
  });
});

describe('R8/ProGuard retrace', () => {
  const mapping = parseProguardMapping(MAPPING);
  const obfuscated = `c.a.d: Order 1042 not found
\tat c.a.b.a(SourceFile:4)
\tat c.a.b.b(SourceFile:6)
\tat c.a.e.invokeSuspend(SourceFile:1)
\tat kotlin.coroutines.jvm.internal.BaseContinuationImpl.resumeWith(ContinuationImpl.kt:33)
Caused by: c.a.d: inner
\tat c.a.b.a(SourceFile:2)`;

  it('maps classes, methods, line ranges, inline frames, source files and exception names', () => {
    const out = symbolicate(obfuscated, 'c.a.d: Order 1042 not found', { proguard: mapping });
    expect(out.message).toBe('com.shop.orders.OrderNotFoundException: Order 1042 not found');
    expect(out.stack.split('\n')).toEqual([
      'com.shop.orders.OrderNotFoundException: Order 1042 not found',
      '\tat com.shop.util.Checks.requireFound(Checks.kt:12)',
      '\tat com.shop.orders.OrderRepository.load(OrderRepository.kt:58)',
      '\tat com.shop.orders.OrderRepository.refresh(OrderRepository.kt:71)',
      '\tat com.shop.orders.OrderViewModel$refresh$1.invokeSuspend(OrderViewModel.java:31)',
      '\tat kotlin.coroutines.jvm.internal.BaseContinuationImpl.resumeWith(ContinuationImpl.kt:33)',
      'Caused by: com.shop.orders.OrderNotFoundException: inner',
      '\tat com.shop.orders.OrderRepository.load(OrderRepository.kt:56)',
    ]);
  });

  it('a method without line information, an unknown class, and a frame without a line', () => {
    expect(retraceFrame(mapping, 'c.a.b', 'c', 'SourceFile', null)).toEqual([
      { className: 'com.shop.orders.OrderRepository', method: 'clear', file: 'OrderRepository.kt', line: null },
    ]);
    expect(retraceFrame(mapping, 'z.z.z', 'a', 'SourceFile', 3)).toBeNull();
    expect(symbolicate('\tat z.z.z.a(Unknown Source)', '', { proguard: mapping }).mapped).toBe(0);
  });

  it('builds of one bug with different obfuscation group as one once retraced', () => {
    const other = parseProguardMapping(
      MAPPING.replace(/c\.a\.b/g, 'x.y.z')
        .replace(/c\.a\.d/g, 'x.y.w')
        .replace(/c\.a\.e/g, 'x.y.v'),
    );
    const rebuilt = obfuscated
      .replace(/c\.a\.b/g, 'x.y.z')
      .replace(/c\.a\.d/g, 'x.y.w')
      .replace(/c\.a\.e/g, 'x.y.v');
    expect(crashGroupKey(rebuilt)).not.toBe(crashGroupKey(obfuscated));
    expect(crashGroupKey(symbolicate(rebuilt, '', { proguard: other }).stack)).toBe(
      crashGroupKey(symbolicate(obfuscated, '', { proguard: mapping }).stack),
    );
  });
});

describe('symbolication for the group key', () => {
  const url = 'https://shop.example.com/assets/index-8f3a2c.js';
  const r = release(url, '8f3a2c');
  const map = parseSourceMap(r.map);
  const jsMapFor = (p: string) => (p === '/assets/index-8f3a2c.js' ? map : null);
  const at = (l: string) => /\((\S+):(\d+):(\d+)\)$/.exec(l)!;

  it('reads JavaScriptCore bare-URL frames and React Native V8 frames', () => {
    const [, file, line, col] = at(r.stack.split('\n')[1]!);
    expect(parseJsFrame(`${file}:${line}:${col}`)).toMatchObject({ style: 'bare', fn: null, file: url });
    expect(parseJsFrame(`onPress(${file}:${line}:${col})`)).toMatchObject({ style: 'rnv8', fn: 'onPress', file: url });
    expect(jsFilesOf(`${file}:${line}:${col}\nonPress(${file}:${line}:${col})`)).toEqual(['/assets/index-8f3a2c.js']);
    const bare = symbolicate(`${file}:${line}:${col}`, '', { jsMapFor });
    expect(bare.mapped).toBe(1);
    expect(bare.stack).toMatch(/^src\/orders\.ts:6:\d+$/);
    const rn = symbolicate(`onPress(${file}:${line}:${col})`, '', { jsMapFor });
    expect(rn.stack).toMatch(/^at src\/orders\.ts:6:\d+$/);
  });

  it('a mapped frame never keeps its minified name: two builds that minify the outermost frame apart are one group', () => {
    const lines = r.stack.split('\n');
    const rename = (name: string) => [...lines.slice(0, 3), lines[3]!.replace(/at \S+ \(/, `at ${name} (`)].join('\n');
    const a = symbolicate(rename('s'), 'Error: Order 1042 not found', { jsMapFor }).stack;
    const b = symbolicate(rename('a'), 'Error: Order 1042 not found', { jsMapFor }).stack;
    expect(a).toBe(b);
    expect(crashGroupKey(a)).toBe(crashGroupKey(b));
  });

  it("an R8 frame whose file is the mapping id (or SourceFile, Unknown Source) takes its original class's file", () => {
    const mapping = parseProguardMapping(MAPPING);
    for (const file of ['r8-map-id-8f3a2c1d9e', 'SourceFile', 'Unknown Source']) {
      expect(retraceFrame(mapping, 'c.a.b', 'b', file, 5)).toEqual([
        { className: 'com.shop.orders.OrderRepository', method: 'refresh', file: 'OrderRepository.kt', line: 70 },
      ]);
    }
    const build = (id: string) =>
      symbolicate(`java.lang.IllegalStateException: x\n\tat c.a.b.b(r8-map-id-${id}:5)`, '', { proguard: mapping })
        .stack;
    expect(build('8f3a2c')).toBe(build('0b71d9'));
    expect(build('8f3a2c')).toContain('at com.shop.orders.OrderRepository.refresh(OrderRepository.kt:70)');
  });
});
