import v8 from 'node:v8';
import vm from 'node:vm';
import zlib from 'node:zlib';
import { originalPositionFor } from '@jridgewell/trace-mapping';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSourceMap, SourceMapTooLargeError } from '../../src/domain/symbolication/index.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { sessionStart, T0 } from '../helpers/payloads.ts';
import { release } from '../helpers/bundle.ts';

// Issue 32, finding 3: a 15 KB gzip of `";"×15e6 + "AAAA"` is a valid source map that decodes to
// fifteen million line arrays. Maps are bounded by their decoded size at upload, and the parsed-map
// cache charges each one by that size, which is checked here against the heap a decoded map takes.

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const map = (o: Record<string, unknown>) => JSON.stringify({ version: 3, sources: ['a.js'], names: [], ...o });
const lines = (n: number, seg: string, perLine: number) =>
  Array.from({ length: n }, () => Array(perLine).fill(seg).join(',')).join(';');

describe("a source map's decoded size, estimated from its text", () => {
  const shapes: Record<string, () => string> = {
    'empty lines': () => map({ mappings: `${';'.repeat(1_000_000)}AAAA` }),
    'segments of five fields': () => map({ names: ['n'], mappings: lines(10_000, 'CAAAA', 20) }),
    'segments of one field': () => map({ mappings: lines(10_000, 'C', 20) }),
    'sections with offsets': () =>
      JSON.stringify({
        version: 3,
        sections: Array.from({ length: 100 }, (_, i) => ({
          offset: { line: i * 1000, column: 0 },
          map: { version: 3, sources: [`s${i}.js`], names: ['x'], mappings: lines(100, 'CAAAA', 2) },
        })),
      }),
    'many sources and names under a long root': () =>
      map({
        sourceRoot: `webpack:///${'r'.repeat(200)}`,
        sources: Array.from({ length: 50_000 }, (_, i) => `src/${i}.js`),
        names: Array.from({ length: 100_000 }, (_, i) => `n${i}`),
        mappings: 'AAAA',
      }),
  };
  for (const [name, make] of Object.entries(shapes)) {
    it(`is never under the heap it takes decoded, nor more than 2.5 times it: ${name}`, () => {
      const text = make();
      gc();
      gc();
      const before = process.memoryUsage().heapUsed;
      const r = readSourceMap(text);
      // the first lookup decodes every line (the parse alone leaves a plain map encoded)
      originalPositionFor(r.map, { line: 1, column: 0 });
      gc();
      gc();
      const held = process.memoryUsage().heapUsed - before;
      expect(r.map).toBeTruthy();
      expect(held).toBeGreaterThan(0);
      expect(r.size.bytes).toBeGreaterThanOrEqual(held);
      expect(r.size.bytes).toBeLessThanOrEqual(held * 2.5);
    });
  }

  it('refuses past the bound before decoding: lines, segments, section offsets, nesting, JSON containers', () => {
    const bound = 64 * 1024 * 1024;
    const tooBig = (text: string) => {
      try {
        readSourceMap(text, bound);
      } catch (e) {
        return e instanceof SourceMapTooLargeError;
      }
      return false;
    };
    expect(tooBig(map({ mappings: `${';'.repeat(2_000_000)}AAAA` }))).toBe(true);
    expect(tooBig(map({ mappings: lines(1000, 'A', 1000) }))).toBe(true);
    expect(
      tooBig(
        JSON.stringify({
          version: 3,
          sections: [{ offset: { line: 1e9, column: 0 }, map: { version: 3, sources: [], names: [], mappings: 'A' } }],
        }),
      ),
    ).toBe(true);
    expect(tooBig(JSON.stringify({ version: 3, mappings: '', sources: [], junk: Array(2_000_000).fill([]) }))).toBe(
      true,
    );
    let nested: Record<string, unknown> = { version: 3, sources: [], names: [], mappings: 'A' };
    for (let i = 0; i < 6; i++) nested = { version: 3, sections: [{ offset: { line: 0, column: 0 }, map: nested }] };
    expect(() => readSourceMap(JSON.stringify(nested), bound)).toThrow(/nest deeper/);
    expect(() =>
      readSourceMap(JSON.stringify({ version: 3, sections: [{ offset: { line: -1, column: 0 }, map: {} }] }), bound),
    ).toThrow(/offset/);
    expect(() =>
      readSourceMap(JSON.stringify({ version: 3, sections: [{ offset: { line: 0, column: 0 }, map: '{}' }] }), bound),
    ).toThrow(/map must be a source map object/);
    // an ordinary map passes
    expect(readSourceMap(release('https://a/x.js', 'aaaaaa1').map, bound).size.bytes).toBeLessThan(bound);
  });
});

describe('uploads and the parsed-map cache', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ARTIFACT_MAX_DECODED_BYTES: String(96 * 1024 * 1024) });
  });
  afterAll(async () => {
    await s?.close();
  });

  const upload = (projectId: string, rel: string, name: string, body: Buffer, gzip = false) =>
    s.app.inject({
      method: 'POST',
      url: `/api/projects/${projectId}/releases/${rel}/artifacts?name=${encodeURIComponent(name)}`,
      headers: {
        ...s.admin,
        'content-type': 'application/octet-stream',
        ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      },
      payload: gzip ? zlib.gzipSync(body) : body,
    });

  it("the probe's gzipped `;`×15e6 map is a 422 naming the bound, stored nowhere", async () => {
    const p = await s.createProject();
    const body = Buffer.from(map({ mappings: `${';'.repeat(15_000_000)}AAAA` }));
    const before = process.memoryUsage().rss;
    const r = await upload(p.projectId, '1.0.0', 'x.js.map', body, true);
    expect(r.statusCode).toBe(422);
    expect(r.json().details[0].message).toContain('ARTIFACT_MAX_DECODED_BYTES');
    expect(r.json().details[0].message).toContain('15000001 lines');
    // the refusal decoded nothing: far less than the 0.8 GB the decoded map would take
    expect(process.memoryUsage().rss - before).toBeLessThan(300 * 1024 * 1024);
    const list = await s.app.inject({
      method: 'GET',
      url: `/api/projects/${p.projectId}/releases/1.0.0/artifacts`,
      headers: s.admin,
    });
    expect(list.json().data).toEqual([]);
  });

  it('a map is charged to the cache by its decoded size, not a multiple of its file', async () => {
    const p = await s.createProject();
    const a = release('https://shop.example.com/assets/index-5eed01.js', '5eed01');
    // a map of 400 000 empty lines: 400 KB of text, ~25 MB decoded
    const heavy = Buffer.from(map({ mappings: `${';'.repeat(400_000)}AAAA` }));
    expect((await upload(p.projectId, '7.0.0', '~/assets/index-5eed01.js.map', Buffer.from(a.map))).statusCode).toBe(
      201,
    );
    expect((await upload(p.projectId, '7.0.0', '~/assets/heavy.js.map', heavy)).statusCode).toBe(201);
    const st = sessionStart();
    st.device = { ...st.device, appVersion: '7.0.0', appBuildNumber: '1' };
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: '/ingest/session',
          headers: { authorization: `Bearer ${p.apiKey}` },
          payload: st,
        })
      ).statusCode,
    ).toBe(201);
    const before = s.svc.symbols.cachedBytes();
    const stack = `Error: boom\n    at f (https://shop.example.com/assets/heavy.js:1:1)\n${a.stack.split('\n').slice(1).join('\n')}`;
    const r = await s.app.inject({
      method: 'POST',
      url: '/ingest/crash',
      headers: { authorization: `Bearer ${p.apiKey}` },
      payload: {
        sessionId: st.sessionId,
        message: 'Error: boom',
        stackTrace: stack,
        isFatal: true,
        handled: false,
        timestamp: T0 + 5_000,
      },
    });
    expect(r.statusCode).toBe(201);
    await s.settled(); // symbolicated once the crash pipeline records it
    const charged = s.svc.symbols.cachedBytes() - before;
    // 400 000 lines at tens of bytes each: 3× the 400 KB file (the old charge) is far below it
    expect(charged).toBeGreaterThan(400_000 * 40);
    expect(charged).toBeGreaterThan(heavy.length * 3 * 10);
  });
});
