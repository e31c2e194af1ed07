import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// The normalised lines as the previous rule (v1) hashes them: what groups made before the frame
// rule, and stacks with no parsed frame, are keyed by (the frame rule: test/crashes/grouping.test.ts).
import { legacyGroupKey as crashGroupKey, normalisedHead } from '../../src/domain/crashGrouping.ts';
import {
  isFrame,
  MAX_LINE_CHARS,
  normaliseFrame,
  normaliseMessage,
  normaliseStack,
} from '../../src/domain/stackNormalise.ts';
import { parseJsFrame } from '../../src/domain/symbolication/jsFrames.ts';

// Volatile values as real reports carry them.
const hex = (min: number, max: number) =>
  fc.stringMatching(new RegExp(`^[0-9a-f]{${min},${max}}$`)).filter((s) => /\d/.test(s) && /[a-f]/.test(s));
const viteHash = fc.stringMatching(/^[A-Za-z0-9_-]{8}$/).filter((s) => /\d/.test(s));
const id = fc.integer({ min: 0, max: 10_000_000 });
const address = fc.bigInt({ min: 0x100000000n, max: 0x2ffffffffn }).map((n) => `0x${n.toString(16).padStart(16, '0')}`);
const slide = fc.bigInt({ min: 0x100000n, max: 0xfffffffn }).map((n) => n * 0x4000n);
const query = fc.oneof(
  fc.constant(''),
  fc.stringMatching(/^[a-z]{1,4}=[a-z0-9]{1,8}$/).map((q) => `?${q}`),
);

/** One bug per platform, rendered with the volatile values of one report. */
const reports = {
  chrome: (o: { id: number; uuid: string; bundle: string; q: string }) =>
    `Error: Order ${o.id} not found (request ${o.uuid})
    at loadOrder (https://shop.example.com/assets/index-${o.bundle}.js${o.q}:1:2345)
    at async checkout (https://shop.example.com/assets/index-${o.bundle}.js${o.q}:1:9876)
    at https://shop.example.com/assets/vendor-${o.bundle}.js:2:100
    at HTMLButtonElement.onclick (https://shop.example.com/:12:5)`,
  firefox: (o: { id: number; uuid: string; bundle: string; q: string }) =>
    `loadOrder@https://shop.example.com/assets/index-${o.bundle}.js${o.q}:1:2345
checkout@https://shop.example.com/assets/index-${o.bundle}.js${o.q}:1:9876
@https://shop.example.com/assets/vendor-${o.bundle}.js:2:100`,
  node: (o: { id: number; uuid: string; obj: string }) =>
    `TypeError: Cannot read properties of undefined (reading 'total') for cart ${o.uuid} at 0x${o.obj}
    at priceCart (/srv/app/dist/server.js:812:19)
    at process.processTicksAndRejections (node:internal/process/task_queues:105:5)`,
  android: (o: { id: number; obj: string }) =>
    `java.lang.IllegalStateException: Order ${o.id} not found in com.shop.Cart@${o.obj}
\tat com.shop.orders.OrderRepository.load(OrderRepository.kt:57)
\tat com.shop.orders.OrderViewModel$refresh$1.invokeSuspend(OrderViewModel.kt:31)
\tat kotlin.coroutines.jvm.internal.BaseContinuationImpl.resumeWith(ContinuationImpl.kt:33)
\tat android.os.Handler.handleCallback(Handler.java:958)`,
  ios: (o: { addr: string; load: bigint; id: number }) =>
    `0   Shop                                ${o.addr} OrderStore.load(id:) + ${120 + 0 * o.id}
1   Shop                                ${o.addr} 0x${o.load.toString(16)} + 33780
2   SwiftUI                             ${o.addr} 0x${(o.load + 0x8000000n).toString(16)} + 1204
3   libswiftCore.dylib                  ${o.addr} $ss17_assertionFailure_ + ${44 + (o.id % 7)}`,
  rn: (o: { id: number }) =>
    `Error: Order ${o.id} not found
    at loadOrder (address at /data/app/~~Yq3X${o.id}z1p9==/com.shop-Ab${o.id}xyz==/base.apk!/assets/index.android.bundle:1:234567)
    at anonymous (address at index.android.bundle:1:98765)`,
};

const volatile = fc.record({
  id,
  uuid: fc.uuid(),
  bundle: fc.oneof(hex(6, 12), viteHash),
  q: query,
  obj: hex(6, 10),
  addr: address,
  load: slide,
});

describe('stack normalisation: one bug stays one group', () => {
  for (const [platform, render] of Object.entries(reports)) {
    it(`${platform}: ids, uuids, hex, rebuilt bundle hashes, query strings and load addresses do not split`, () => {
      fc.assert(
        fc.property(volatile, volatile, (a, b) => {
          expect(crashGroupKey(render(a))).toBe(crashGroupKey(render(b)));
        }),
        { numRuns: 200 },
      );
    });
  }

  it("reads the issue's examples as one group each", () => {
    expect(crashGroupKey('Error: Order 1042 not found\n    at a (x.js:1:2)')).toBe(
      crashGroupKey('Error: Order 77 not found\n    at a (x.js:1:2)'),
    );
    expect(crashGroupKey('TypeError: x is undefined\n    at f (https://a.b/assets/index-8f3a2c.js:1:2345)')).toBe(
      crashGroupKey('TypeError: x is undefined\n    at f (https://a.b/assets/index-b71d09.js:1:2345)'),
    );
    expect(normaliseFrame('    at f (https://a.b/assets/index-8f3a2c.js:1:2345)')).toBe(
      '    at f (https://a.b/assets/index-*.js:1:2345)',
    );
  });

  it('keeps the five-line rule: a difference on line 6 does not split, one on line 5 does', () => {
    fc.assert(
      fc.property(volatile, fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (v, x, y) => {
        const base = reports.android(v);
        expect(crashGroupKey(`${base}\n\tat ${x}`)).toBe(crashGroupKey(`${base}\n\tat ${y}`));
      }),
    );
    const lines = reports.android({ id: 1, obj: 'a1b2c3' }).split('\n');
    const changed = [...lines.slice(0, 4), '\tat android.os.Handler.dispatchMessage(Handler.java:99)'].join('\n');
    expect(crashGroupKey(changed)).not.toBe(crashGroupKey(lines.join('\n')));
  });

  it("a stack with nothing volatile keys as before the rule (white space as sent); Apple frames' padding does not split", () => {
    const stable = 'Error: cart is empty\n    at checkout (cart.js:10:5)\n\tat x.Y.z(Y.java:3)';
    expect(normalisedHead(stable)).toBe(stable);
    expect(crashGroupKey('0   Shop          0x0000000104a8c3f4 main + 1')).toBe(
      crashGroupKey('0   Shop  0x0000000104a8c3f4 main + 1'),
    );
  });

  it('hashes only five lines even when the stack has CRLF line ends', () => {
    const s = reports.android({ id: 1, obj: 'a1b2c3' });
    expect(crashGroupKey(s.replace(/\n/g, '\r\n'))).toBe(crashGroupKey(s));
    expect(normalisedHead(`${s}\n\tat more(More.java:1)`).split('\n')).toHaveLength(5);
  });
});

describe('stack normalisation: different bugs stay different groups', () => {
  const site = fc.record({ line: fc.integer({ min: 1, max: 5000 }), col: fc.integer({ min: 1, max: 200 }) });
  it("two throw sites (line or column) are two groups, in every platform's frame syntax", () => {
    const frames = [
      (l: number, c: number) => `Error: boom\n    at f (https://a.b/assets/index-8f3a2c.js:${l}:${c})`,
      (l: number, c: number) => `f@https://a.b/assets/index-8f3a2c.js:${l}:${c}`,
      (l: number) => `java.lang.NullPointerException\n\tat com.a.B.c(B.java:${l})`,
      (l: number) => `System.Exception: x\n   at A.B() in C:\\src\\A.cs:line ${l}`,
      (l: number) => `0   Shop   0x0000000104a8c3f4 0x104a84000 + ${l}`,
    ];
    fc.assert(
      fc.property(site, site, fc.integer({ min: 0, max: frames.length - 1 }), (a, b, i) => {
        fc.pre(a.line !== b.line || (i < 2 && a.col !== b.col));
        const f = frames[i]!;
        expect(crashGroupKey(f(a.line, a.col))).not.toBe(crashGroupKey(f(b.line, b.col)));
      }),
    );
  });

  it('different exception types and different message words are different groups', () => {
    const word = fc.stringMatching(/^[A-Za-z]{3,12}$/);
    fc.assert(
      fc.property(word, word, id, (w1, w2, n) => {
        fc.pre(w1 !== w2);
        const frame = '\n    at f (app.js:1:2)';
        expect(crashGroupKey(`${w1}Error: ${n} items${frame}`)).not.toBe(
          crashGroupKey(`${w2}Error: ${n} items${frame}`),
        );
        expect(crashGroupKey(`Error: ${w1} ${n}${frame}`)).not.toBe(crashGroupKey(`Error: ${w2} ${n}${frame}`));
      }),
    );
    expect(crashGroupKey('java.lang.IllegalStateException: x\n\tat a.B.c(B.java:1)')).not.toBe(
      crashGroupKey('java.lang.IllegalArgumentException: x\n\tat a.B.c(B.java:1)'),
    );
  });

  it('different functions or files at the same line are different groups', () => {
    expect(crashGroupKey('Error: x\n    at f (app.js:1:2)')).not.toBe(crashGroupKey('Error: x\n    at g (app.js:1:2)'));
    expect(crashGroupKey('Error: x\n    at f (index-8f3a2c.js:1:2)')).not.toBe(
      crashGroupKey('Error: x\n    at f (vendor-8f3a2c.js:1:2)'),
    );
    expect(crashGroupKey('0 Shop 0x0000000104a8c3f4 A.load() + 1')).not.toBe(
      crashGroupKey('0 Shop 0x0000000104a8c3f4 B.load() + 1'),
    );
  });

  it('identifiers with digits are not numbers: Http2Error is not Http3Error', () => {
    expect(normaliseMessage('Http2Error: stream 7 reset')).toBe('Http2Error: stream <n> reset');
    expect(crashGroupKey('Http2Error: x')).not.toBe(crashGroupKey('Http3Error: x'));
  });
});

describe('stack normalisation: what each placeholder replaces', () => {
  it('message lines: numbers, UUIDs, hex runs; Caused by and .NET inner exceptions too', () => {
    expect(normaliseMessage('Error: user 3f2504e0-4f89-11d3-9a0c-0305e82c3301 at 0x7ffe12ab id deadbeef12')).toBe(
      'Error: user <uuid> at <hex> id <hex>',
    );
    expect(
      normaliseMessage(
        'ClientRequestException: Client request(GET https://api.example.com/orders/1042?token=abc) invalid: 404',
      ),
    ).toBe('ClientRequestException: Client request(GET https://api.example.com/orders/<n>) invalid: <n>');
    expect(
      normaliseStack(
        'java.lang.RuntimeException: a\n\tat a.B.c(B.java:1)\nCaused by: java.io.IOException: timeout after 3000 ms',
      )[2],
    ).toBe('Caused by: java.io.IOException: timeout after <n> ms');
    expect(normaliseStack('System.Exception: outer\n ---> System.IO.IOException: read 42 bytes')[1]).toBe(
      ' ---> System.IO.IOException: read <n> bytes',
    );
  });

  it('frames: addresses, + offset after a symbol, query strings, install paths; the offset after a load address stays', () => {
    expect(normaliseFrame('0   MyApp  0x0000000104a8c3f4 main + 120')).toBe('0 MyApp <addr> main + <offset>');
    expect(normaliseFrame('1   MyApp  0x0000000104a8c3f4 0x104a84000 + 33780')).toBe('1 MyApp <addr> <addr> + 33780');
    expect(
      normaliseFrame('#01 pc 00000000000ab123  /data/app/~~Yq3X==/com.app-AbC==/lib/arm64/libn.so (crash()+20)'),
    ).toBe('#01 pc <addr>  /data/app/com.app-*/lib/arm64/libn.so (crash()+<offset>)');
    expect(normaliseFrame('at f (https://a.b/app.js?v=3&t=9:1:2)')).toBe('at f (https://a.b/app.js:1:2)');
    expect(normaliseFrame('at f (file:///Users/alice/app/resources/app.asar/main.js:1:2)')).toBe(
      'at f (file:///Users/~/app/resources/app.asar/main.js:1:2)',
    );
    expect(normaliseFrame('at f (app:///dist/main.8f3a2c1d.js:10:4)')).toBe('at f (app:///dist/main.*.js:10:4)');
    expect(normaliseFrame('at Object.<anonymous> (/srv/app/dist/server.js:812:19)')).toBe(
      'at Object.<anonymous> (/srv/app/dist/server.js:812:19)',
    );
  });

  it("tells frames from message lines in each platform's syntax", () => {
    for (const f of [
      '    at f (a.js:1:2)',
      'f@https://a/b.js:1:2',
      'global code@https://a/index-8f3a2c.js:1:2',
      '\tat a.B.c(SourceFile:12)',
      '0   MyApp  0x0000000104a8c3f4 main + 120',
      '    #00 pc 000000000004c3f4  /system/lib64/libc.so (abort+164)',
      '   at A.B() in C:\\a.cs:line 3',
    ]) {
      expect(isFrame(f)).toBe(true);
    }
    for (const m of [
      'Error: Order 1042 not found',
      'java.lang.IllegalStateException: x',
      'TypeError: undefined is not an object',
    ]) {
      expect(isFrame(m)).toBe(false);
    }
  });

  it('a stack whose first line is a frame (Firefox, Safari) keeps its line and column there', () => {
    expect(normaliseStack('loadOrder@https://a/index-8f3a2c.js:1:2345')[0]).toBe(
      'loadOrder@https://a/index-*.js:1:2345',
    );
  });
});

describe('stack normalisation: UUIDs in frames', () => {
  it('a UUID path segment (an iOS container) is volatile; a UUID elsewhere in a frame is not', () => {
    expect(
      normaliseFrame(
        'at f (file:///var/containers/Bundle/Application/3F2504E0-4F89-11D3-9A0C-0305E82C3301/Shop.app/main.jsbundle:1:2)',
      ),
    ).toBe('at f (file:///var/containers/Bundle/Application/<uuid>/Shop.app/main.jsbundle:1:2)');
    expect(crashGroupKey('at 3f2504e0-4f89-11d3-9a0c-0305e82c3301 (x.js:1:1)')).not.toBe(
      crashGroupKey('at 9a2504e0-4f89-11d3-9a0c-0305e82c3301 (x.js:1:1)'),
    );
  });
});

// Volatile values of one build: a Next.js build id (nanoid), esbuild's base32 chunk hash, an
// Android install directory, a library-relative pc and an ELF BuildId.
const build = fc.record({
  buildId: fc.stringMatching(/^[A-Za-z0-9_-]{21}$/),
  next: hex(16, 16),
  esbuild: fc.stringMatching(/^[A-Z2-7]{8}$/),
  cra: hex(8, 8),
  install: fc.stringMatching(/^[A-Za-z0-9_-]{8,22}$/),
  pc: fc.bigInt({ min: 0x1000n, max: 0xffffffffn }).map((n) => n.toString(16).padStart(16, '0')),
  elf: hex(32, 40),
  off: fc.integer({ min: 0, max: 4096 }),
  id,
});
type Build = typeof build extends fc.Arbitrary<infer T> ? T : never;

const builds = {
  next: (b: Build) =>
    `TypeError: Cannot read properties of undefined (reading 'id')
    at OrderPage (https://shop.example.com/_next/static/chunks/pages/orders/%5Bid%5D-${b.next}.js:1:2345)
    at renderWithHooks (https://shop.example.com/_next/static/chunks/framework-${b.next}.js:1:9876)
    at https://shop.example.com/_next/static/${b.buildId}/_buildManifest.js:1:100
    at https://shop.example.com/_next/static/chunks/${b.next}.js:1:50`,
  bundlers: (b: Build) =>
    `Error: Order ${b.id} not found
    at loadOrder (https://shop.example.com/assets/chunk-${b.esbuild}.js:1:2345)
    at checkout (https://shop.example.com/static/js/main.${b.cra}.chunk.js:2:100)
    at https://shop.example.com/dist/index.${b.cra}.js:3:7
    at https://shop.example.com/_next/static/chunks/src_app_page_tsx_${b.cra}._.js:1:50`,
  tombstone: (b: Build) =>
    `Fatal signal 6 (SIGABRT), code -1 (SI_QUEUE) in tid ${b.id} (RenderThread), pid ${b.id} (com.shop)
    #00 pc ${b.pc}  /apex/com.android.runtime/lib64/bionic/libc.so (abort+${b.off}) (BuildId: ${b.elf})
    #01 pc ${b.pc}  /data/app/~~${b.install}==/com.shop-${b.install}==/lib/arm64/libshop.so (Cart::total()+${b.off}) (BuildId: ${b.elf})
    #02 pc ${b.pc}  /data/app/~~${b.install}==/com.shop-${b.install}==/oat/arm64/base.odex (com.shop.Cart.total+${b.off})
    #03 pc ${b.pc}  /mnt/expand/${b.elf.slice(0, 8)}-4f89-11d3-9a0c-0305e82c3301/app/~~${b.install}==/com.shop-${b.install}==/base.apk (art_quick_invoke_stub+${b.off})`,
  art: (b: Build) =>
    `java.lang.IllegalStateException: Order ${b.id} not found
\tat com.shop.Native.total(Native Method)
\tat .loadOrder(address at /data/app/~~${b.install}==/com.shop-${b.install}==/base.apk!classes.dex)
\tat com.shop.orders.OrderRepository.load(OrderRepository.kt:57)`,
};

describe('stack normalisation: build ids, chunk names, tombstones', () => {
  for (const [platform, render] of Object.entries(builds)) {
    it(`${platform}: two builds of one bug are one group`, () => {
      fc.assert(
        fc.property(build, build, (a, b) => {
          expect(crashGroupKey(render(a))).toBe(crashGroupKey(render(b)));
        }),
        { numRuns: 200 },
      );
    });
  }

  it('what each rule replaces', () => {
    expect(normaliseFrame('    at f (https://a.b/_next/static/Xk2Qa9bC1dE3fG4hI5jK6/_buildManifest.js:1:2)')).toBe(
      '    at f (https://a.b/_next/static/*/_buildManifest.js:1:2)',
    );
    expect(normaliseFrame('    at f (https://a.b/_next/static/chunks/pages/index-a1b2c3d4e5f67890.js:1:2)')).toBe(
      '    at f (https://a.b/_next/static/chunks/pages/index-*.js:1:2)',
    );
    expect(normaliseFrame('    at f (https://a.b/_next/static/chunks/2edb282b-a1b2c3d4e5f67890.js:1:2)')).toBe(
      '    at f (https://a.b/_next/static/chunks/2edb282b-*.js:1:2)',
    );
    expect(normaliseFrame('    at f (https://a.b/_next/static/chunks/8f3a2c1d9e0b7a6c.js:1:2)')).toBe(
      '    at f (https://a.b/_next/static/chunks/*.js:1:2)',
    );
    expect(normaliseFrame('    at f (https://a.b/assets/chunk-ABCDEFGH.js:1:2)')).toBe(
      '    at f (https://a.b/assets/chunk-*.js:1:2)',
    );
    expect(
      normaliseFrame(
        '    #00 pc 000000000004f3a8  /apex/com.android.runtime/lib64/bionic/libc.so (abort+164) (BuildId: 8e0e5c1f2a3b4c5d6e7f8091a2b3c4d5)',
      ),
    ).toBe('    #00 pc <addr>  /apex/com.android.runtime/lib64/bionic/libc.so (abort+<offset>) (BuildId: <hex>)');
    // No symbol: the pc is what tells two sites apart, it stays.
    expect(
      normaliseFrame('    #01 pc 000000000004f3a8  /data/app/~~x==/com.a-y==/lib/arm64/libn.so (BuildId: 8e0e5c1f)'),
    ).toBe('    #01 pc 000000000004f3a8  /data/app/com.a-*/lib/arm64/libn.so (BuildId: <hex>)');
  });

  it('two bugs stay two groups: other files, symbols, throw sites, unsymbolised pcs', () => {
    const key = crashGroupKey;
    const next = (file: string, col = 2) =>
      `TypeError: x\n    at f (https://a.b/_next/static/Xk2Qa9bC1dE3fG4hI5jK6/${file}:1:${col})`;
    expect(key(next('_buildManifest.js'))).not.toBe(key(next('_ssgManifest.js')));
    expect(
      key('TypeError: x\n    at f (https://a.b/_next/static/chunks/pages/index-a1b2c3d4e5f67890.js:1:2)'),
    ).not.toBe(key('TypeError: x\n    at f (https://a.b/_next/static/chunks/pages/cart-a1b2c3d4e5f67890.js:1:2)'));
    expect(key('TypeError: x\n    at f (https://a.b/_next/static/chunks/8f3a2c1d9e0b7a6c.js:1:2)')).not.toBe(
      key('TypeError: x\n    at f (https://a.b/_next/static/chunks/8f3a2c1d9e0b7a6c.js:1:3)'),
    );
    expect(key('Error: x\n    at f (https://a.b/assets/chunk-ABCDEFGH.js:1:2)')).not.toBe(
      key('Error: x\n    at f (https://a.b/assets/chunk-ABCDEFGH.js:1:3)'),
    );
    expect(key('Error: x\n    at f (https://a.b/assets/chunk-ABCDEFGH.js:1:2)')).not.toBe(
      key('Error: x\n    at f (https://a.b/assets/vendor-ABCDEFGH.js:1:2)'),
    );
    fc.assert(
      fc.property(build, (b) => {
        const tomb = (sym: string) =>
          `signal 6\n    #00 pc ${b.pc}  /data/app/com.shop-1/lib/arm64/libshop.so (${sym}+${b.off}) (BuildId: ${b.elf})`;
        expect(key(tomb('Cart::total()'))).not.toBe(key(tomb('Cart::clear()')));
        const bare = (pc: string) =>
          `signal 6\n    #00 pc ${pc}  /data/app/com.shop-1/lib/arm64/libshop.so (BuildId: ${b.elf})`;
        expect(key(bare(b.pc))).not.toBe(key(bare(`${b.pc.slice(0, -1)}${b.pc.endsWith('0') ? '1' : '0'}`)));
      }),
    );
    expect(key('x\n\tat com.a.B.c(Native Method)')).not.toBe(key('x\n\tat com.a.B.d(Native Method)'));
  });

  it('keeps the five-line rule on tombstones: line 6 does not split, line 5 does', () => {
    fc.assert(
      fc.property(build, build, (a, b) => {
        expect(crashGroupKey(`${builds.tombstone(a)}\n    #04 pc ${a.pc}  /system/lib64/liba.so`)).toBe(
          crashGroupKey(`${builds.tombstone(b)}\n    #04 pc ${b.pc}  /system/lib64/libb.so`),
        );
        const lines = builds.tombstone(a).split('\n');
        const changed = [
          ...lines.slice(0, 4),
          lines[4]!.replace('art_quick_invoke_stub', 'art_quick_invoke_static_stub'),
        ].join('\n');
        expect(crashGroupKey(changed)).not.toBe(crashGroupKey(builds.tombstone(a)));
      }),
      { numRuns: 50 },
    );
  });
});

describe('stack normalisation: an HTTP status in a message stays', () => {
  const status = fc.integer({ min: 100, max: 599 });
  const phrasings = [
    (s: number) => `Error: HTTP ${s}`,
    (s: number) => `retrofit2.HttpException: HTTP ${s} Response`,
    (s: number) => `HttpException: HTTP/1.1 ${s} Bad Gateway`,
    (s: number) => `AxiosError: Request failed with status code ${s}`,
    (s: number) => `Error: fetch failed, status: ${s}`,
    (s: number) => `Error: {"statusCode":${s}}`,
    (s: number) => `ApiError: code=${s}`,
  ];
  const frame = '\n    at f (app.js:1:2)';

  it('two statuses are two groups; the ids around them still do not split', () => {
    fc.assert(
      fc.property(status, status, id, id, fc.integer({ min: 0, max: phrasings.length - 1 }), (s1, s2, n1, n2, i) => {
        const p = phrasings[i]!;
        if (s1 !== s2) expect(crashGroupKey(`${p(s1)}${frame}`)).not.toBe(crashGroupKey(`${p(s2)}${frame}`));
        expect(crashGroupKey(`${p(s1)} for order ${n1}${frame}`)).toBe(
          crashGroupKey(`${p(s1)} for order ${n2}${frame}`),
        );
      }),
    );
  });

  it('only a 100-599 number right after HTTP, status or code is kept', () => {
    expect(normaliseMessage('HttpException: HTTP/1.1 502 Bad Gateway')).toBe('HttpException: HTTP/<n> 502 Bad Gateway');
    expect(normaliseMessage('Error: Order 1042 failed with status 404')).toBe(
      'Error: Order <n> failed with status 404',
    );
    expect(normaliseMessage('Error: Order 404 failed')).toBe('Error: Order <n> failed');
    expect(normaliseMessage('Error: code 1042, status 999, HTTP error 404')).toBe(
      'Error: code <n>, status <n>, HTTP error <n>',
    );
    expect(normaliseMessage('Error: exit code 1')).toBe('Error: exit code <n>');
  });

  it('a message with an HTTP status and nothing else volatile keys as before normalisation', () => {
    const stable = 'AxiosError: Request failed with status code 404\n    at settle (app.js:10:5)';
    expect(normalisedHead(stable)).toBe(stable);
  });
});

describe('stack normalisation: script names in a message', () => {
  it('a rebuilt chunk in a dynamic import failure is one group; another module is another', () => {
    const msg = (name: string) =>
      `TypeError: Failed to fetch dynamically imported module: https://shop.example.com/assets/${name}.js\n    at f (app.js:1:2)`;
    fc.assert(
      fc.property(viteHash, viteHash, fc.stringMatching(/^[A-Z2-7]{8}$/), (a, b, c) => {
        expect(crashGroupKey(msg(`OrderPage-${a}`))).toBe(crashGroupKey(msg(`OrderPage-${b}`)));
        expect(crashGroupKey(msg(`chunk-${c}`))).toBe(crashGroupKey(msg(`chunk-${a}`)));
        expect(crashGroupKey(msg(`OrderPage-${a}`))).toBe(crashGroupKey(msg('OrderPage-8f3a2c1d')));
      }),
    );
    // A base64 hash holding a hex run, a 0x… or a digit run is still read whole.
    for (const h of ['AA00aA0-', 'Aa_0-0x0', 'Dk3-1234'])
      expect(crashGroupKey(msg(`OrderPage-${h}`))).toBe(crashGroupKey(msg('OrderPage-8f3a2c1d')));
    fc.assert(
      fc.property(viteHash, (a) => {
        expect(crashGroupKey(msg(`OrderPage-${a}`))).not.toBe(crashGroupKey(msg(`CartPage-${a}`)));
      }),
    );
    expect(
      normaliseMessage('Error: Failed to load https://a.b/_next/static/Xk2Qa9bC1dE3fG4hI5jK6/_buildManifest.js'),
    ).toBe('Error: Failed to load https://a.b/_next/static/<hex>/_buildManifest.js');
  });
});

describe('stack normalisation: hostile lines are read in bounded time', () => {
  // The fourth probe's inputs: one 262 KB line held the event loop ~330 s, 16 KB lines of a1…
  // or /a… 0.7-1.1 s each. Every pattern now sees at most MAX_LINE_CHARS of a line.
  const long = (unit: string, n = 262_124) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  const hostile = [
    `E\n#00 pc 1234 ${long('a')}`,
    `E\n${long('a1', 16_384)}`,
    `E\n${long('/a', 16_384)}`,
    `E\n    at ${long('a-')}`,
    long('http://a.'),
    `${long('status 404 ')}\n${long('/_next/static/chunks/a')}`,
  ];

  it('a line is keyed by its first KiB, so nothing past it is ever read', () => {
    for (const s of hostile) {
      const [first, ...rest] = s.split('\n');
      const cut = [first!.slice(0, MAX_LINE_CHARS), ...rest.map((l) => l.slice(0, MAX_LINE_CHARS))].join('\n');
      expect(crashGroupKey(s)).toBe(crashGroupKey(cut));
      expect(
        normalisedHead(s)
          .split('\n')
          .every((l) => l.length <= MAX_LINE_CHARS * 2),
      ).toBe(true);
    }
  });

  it('every probe input costs well under a second of CPU (it was minutes)', () => {
    // Generous on purpose: a busy machine must not fail it; the quadratic patterns took 0.7-330 s.
    const before = process.cpuUsage();
    for (const s of hostile) {
      crashGroupKey(s);
      parseJsFrame(s.split('\n')[1] ?? s);
    }
    const used = process.cpuUsage(before);
    expect((used.user + used.system) / 1000).toBeLessThan(2000);
  });

  it('a frame line longer than any frame is not parsed for symbolication', () => {
    expect(parseJsFrame(`    at f (${long('a', 2000)}.js:1:2)`)).toBeNull();
    expect(parseJsFrame('    at f (app.js:1:2)')).not.toBeNull();
  });
});
