import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { crashGroupKey, normalisedHead } from '../src/domain/crashGrouping.ts';
import { isFrame, normaliseFrame, normaliseMessage, normaliseStack } from '../src/domain/stackNormalise.ts';

// Volatile values as real reports carry them.
const hex = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${min},${max}}$`)).filter((s) => /\d/.test(s) && /[a-f]/.test(s));
const viteHash = fc.stringMatching(/^[A-Za-z0-9_-]{8}$/).filter((s) => /\d/.test(s));
const id = fc.integer({ min: 0, max: 10_000_000 });
const address = fc.bigInt({ min: 0x100000000n, max: 0x2ffffffffn }).map((n) => `0x${n.toString(16).padStart(16, '0')}`);
const slide = fc.bigInt({ min: 0x100000n, max: 0xfffffffn }).map((n) => n * 0x4000n);
const query = fc.oneof(fc.constant(''), fc.stringMatching(/^[a-z]{1,4}=[a-z0-9]{1,8}$/).map((q) => `?${q}`));

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
      fc.assert(fc.property(volatile, volatile, (a, b) => {
        expect(crashGroupKey(render(a))).toBe(crashGroupKey(render(b)));
      }), { numRuns: 200 });
    });
  }

  it('reads the issue\'s examples as one group each', () => {
    expect(crashGroupKey('Error: Order 1042 not found\n    at a (x.js:1:2)')).toBe(crashGroupKey('Error: Order 77 not found\n    at a (x.js:1:2)'));
    expect(crashGroupKey('TypeError: x is undefined\n    at f (https://a.b/assets/index-8f3a2c.js:1:2345)'))
      .toBe(crashGroupKey('TypeError: x is undefined\n    at f (https://a.b/assets/index-b71d09.js:1:2345)'));
    expect(normaliseFrame('    at f (https://a.b/assets/index-8f3a2c.js:1:2345)')).toBe('    at f (https://a.b/assets/index-*.js:1:2345)');
  });

  it('keeps the five-line rule: a difference on line 6 does not split, one on line 5 does', () => {
    fc.assert(fc.property(volatile, fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (v, x, y) => {
      const base = reports.android(v);
      expect(crashGroupKey(`${base}\n\tat ${x}`)).toBe(crashGroupKey(`${base}\n\tat ${y}`));
    }));
    const lines = reports.android({ id: 1, obj: 'a1b2c3' }).split('\n');
    const changed = [...lines.slice(0, 4), '\tat android.os.Handler.dispatchMessage(Handler.java:99)'].join('\n');
    expect(crashGroupKey(changed)).not.toBe(crashGroupKey(lines.join('\n')));
  });

  it('a stack with nothing volatile keys as before the rule (white space as sent); Apple frames\' padding does not split', () => {
    const stable = 'Error: cart is empty\n    at checkout (cart.js:10:5)\n\tat x.Y.z(Y.java:3)';
    expect(normalisedHead(stable)).toBe(stable);
    expect(crashGroupKey('0   Shop          0x0000000104a8c3f4 main + 1')).toBe(crashGroupKey('0   Shop  0x0000000104a8c3f4 main + 1'));
  });

  it('hashes only five lines even when the stack has CRLF line ends', () => {
    const s = reports.android({ id: 1, obj: 'a1b2c3' });
    expect(crashGroupKey(s.replace(/\n/g, '\r\n'))).toBe(crashGroupKey(s));
    expect(normalisedHead(`${s}\n\tat more(More.java:1)`).split('\n')).toHaveLength(5);
  });
});

describe('stack normalisation: different bugs stay different groups', () => {
  const site = fc.record({ line: fc.integer({ min: 1, max: 5000 }), col: fc.integer({ min: 1, max: 200 }) });
  it('two throw sites (line or column) are two groups, in every platform\'s frame syntax', () => {
    const frames = [
      (l: number, c: number) => `Error: boom\n    at f (https://a.b/assets/index-8f3a2c.js:${l}:${c})`,
      (l: number, c: number) => `f@https://a.b/assets/index-8f3a2c.js:${l}:${c}`,
      (l: number) => `java.lang.NullPointerException\n\tat com.a.B.c(B.java:${l})`,
      (l: number) => `System.Exception: x\n   at A.B() in C:\\src\\A.cs:line ${l}`,
      (l: number) => `0   Shop   0x0000000104a8c3f4 0x104a84000 + ${l}`,
    ];
    fc.assert(fc.property(site, site, fc.integer({ min: 0, max: frames.length - 1 }), (a, b, i) => {
      fc.pre(a.line !== b.line || (i < 2 && a.col !== b.col));
      const f = frames[i]!;
      expect(crashGroupKey(f(a.line, a.col))).not.toBe(crashGroupKey(f(b.line, b.col)));
    }));
  });

  it('different exception types and different message words are different groups', () => {
    const word = fc.stringMatching(/^[A-Za-z]{3,12}$/);
    fc.assert(fc.property(word, word, id, (w1, w2, n) => {
      fc.pre(w1 !== w2);
      const frame = '\n    at f (app.js:1:2)';
      expect(crashGroupKey(`${w1}Error: ${n} items${frame}`)).not.toBe(crashGroupKey(`${w2}Error: ${n} items${frame}`));
      expect(crashGroupKey(`Error: ${w1} ${n}${frame}`)).not.toBe(crashGroupKey(`Error: ${w2} ${n}${frame}`));
    }));
    expect(crashGroupKey('java.lang.IllegalStateException: x\n\tat a.B.c(B.java:1)'))
      .not.toBe(crashGroupKey('java.lang.IllegalArgumentException: x\n\tat a.B.c(B.java:1)'));
  });

  it('different functions or files at the same line are different groups', () => {
    expect(crashGroupKey('Error: x\n    at f (app.js:1:2)')).not.toBe(crashGroupKey('Error: x\n    at g (app.js:1:2)'));
    expect(crashGroupKey('Error: x\n    at f (index-8f3a2c.js:1:2)')).not.toBe(crashGroupKey('Error: x\n    at f (vendor-8f3a2c.js:1:2)'));
    expect(crashGroupKey('0 Shop 0x0000000104a8c3f4 A.load() + 1')).not.toBe(crashGroupKey('0 Shop 0x0000000104a8c3f4 B.load() + 1'));
  });

  it('identifiers with digits are not numbers: Http2Error is not Http3Error', () => {
    expect(normaliseMessage('Http2Error: stream 7 reset')).toBe('Http2Error: stream <n> reset');
    expect(crashGroupKey('Http2Error: x')).not.toBe(crashGroupKey('Http3Error: x'));
  });
});

describe('stack normalisation: what each placeholder replaces', () => {
  it('message lines: numbers, UUIDs, hex runs; Caused by and .NET inner exceptions too', () => {
    expect(normaliseMessage('Error: user 3f2504e0-4f89-11d3-9a0c-0305e82c3301 at 0x7ffe12ab id deadbeef12'))
      .toBe('Error: user <uuid> at <hex> id <hex>');
    expect(normaliseMessage('ClientRequestException: Client request(GET https://api.example.com/orders/1042?token=abc) invalid: 404'))
      .toBe('ClientRequestException: Client request(GET https://api.example.com/orders/<n>) invalid: <n>');
    expect(normaliseStack('java.lang.RuntimeException: a\n\tat a.B.c(B.java:1)\nCaused by: java.io.IOException: timeout after 3000 ms')[2])
      .toBe('Caused by: java.io.IOException: timeout after <n> ms');
    expect(normaliseStack('System.Exception: outer\n ---> System.IO.IOException: read 42 bytes')[1]).toBe(' ---> System.IO.IOException: read <n> bytes');
  });

  it('frames: addresses, + offset after a symbol, query strings, install paths; the offset after a load address stays', () => {
    expect(normaliseFrame('0   MyApp  0x0000000104a8c3f4 main + 120')).toBe('0 MyApp <addr> main + <offset>');
    expect(normaliseFrame('1   MyApp  0x0000000104a8c3f4 0x104a84000 + 33780')).toBe('1 MyApp <addr> <addr> + 33780');
    expect(normaliseFrame('#01 pc 00000000000ab123  /data/app/~~Yq3X==/com.app-AbC==/lib/arm64/libn.so (crash()+20)'))
      .toBe('#01 pc 00000000000ab123  /data/app/com.app-*/lib/arm64/libn.so (crash()+<offset>)');
    expect(normaliseFrame('at f (https://a.b/app.js?v=3&t=9:1:2)')).toBe('at f (https://a.b/app.js:1:2)');
    expect(normaliseFrame('at f (file:///Users/alice/app/resources/app.asar/main.js:1:2)')).toBe('at f (file:///Users/~/app/resources/app.asar/main.js:1:2)');
    expect(normaliseFrame('at f (app:///dist/main.8f3a2c1d.js:10:4)')).toBe('at f (app:///dist/main.*.js:10:4)');
    expect(normaliseFrame('at Object.<anonymous> (/srv/app/dist/server.js:812:19)')).toBe('at Object.<anonymous> (/srv/app/dist/server.js:812:19)');
  });

  it('tells frames from message lines in each platform\'s syntax', () => {
    for (const f of ['    at f (a.js:1:2)', 'f@https://a/b.js:1:2', 'global code@https://a/index-8f3a2c.js:1:2', '\tat a.B.c(SourceFile:12)', '0   MyApp  0x0000000104a8c3f4 main + 120',
      '    #00 pc 000000000004c3f4  /system/lib64/libc.so (abort+164)', '   at A.B() in C:\\a.cs:line 3']) {
      expect(isFrame(f)).toBe(true);
    }
    for (const m of ['Error: Order 1042 not found', 'java.lang.IllegalStateException: x', 'TypeError: undefined is not an object']) {
      expect(isFrame(m)).toBe(false);
    }
  });

  it('a stack whose first line is a frame (Firefox, Safari) keeps its line and column there', () => {
    expect(normaliseStack('loadOrder@https://a/index-8f3a2c.js:1:2345')[0]).toBe('loadOrder@https://a/index-*.js:1:2345');
  });
});

describe('stack normalisation: UUIDs in frames', () => {
  it('a UUID path segment (an iOS container) is volatile; a UUID elsewhere in a frame is not', () => {
    expect(normaliseFrame('at f (file:///var/containers/Bundle/Application/3F2504E0-4F89-11D3-9A0C-0305E82C3301/Shop.app/main.jsbundle:1:2)'))
      .toBe('at f (file:///var/containers/Bundle/Application/<uuid>/Shop.app/main.jsbundle:1:2)');
    expect(crashGroupKey('at 3f2504e0-4f89-11d3-9a0c-0305e82c3301 (x.js:1:1)')).not.toBe(crashGroupKey('at 9a2504e0-4f89-11d3-9a0c-0305e82c3301 (x.js:1:1)'));
  });
});
