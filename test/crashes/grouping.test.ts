import { describe, expect, it } from 'vitest';
import { crashGroupKey, legacyGroupKey } from '../../src/domain/crashGrouping.ts';
import { frameText, jvmName, parseFrame } from '../../src/domain/grouping/frames.ts';
import { groupKey, validFingerprint } from '../../src/domain/grouping/groupKey.ts';
import { MAX_LINE_CHARS } from '../../src/domain/stackNormalise.ts';

const text = (line: string, inApp: string[] = []) => {
  const f = parseFrame(line, inApp);
  return f ? `${frameText(f)}${f.inApp ? '' : ' [lib]'}` : null;
};

describe('frame parser: one shape for every runtime', () => {
  it.each([
    // V8 / Node
    ['    at Object.aha (file:///tmp/test.html:18:13)', 'test.html aha'],
    ['    at async checkout (https://cdn.x.com/assets/index-8f3a2c.js?v=1:1:9876)', 'index-*.js checkout'],
    ['    at new Foo (http://localhost:3000/static/js/main.chunk.js:10:5)', 'main.chunk.js Foo'],
    ['    at HTMLButtonElement.onclick (https://shop.example.com/:12:5)', ' onclick'],
    ['    at Foo.bar [as baz] (https://a.b/app.js:3:4)', 'app.js bar'],
    ['    at https://x.com/a.js:2:100', 'a.js 2'],
    ['    at Object.<anonymous> (/srv/app/index.js:3:9)', 'index.js 3'],
    [
      '    at process.processTicksAndRejections (node:internal/process/task_queues:105:5)',
      'task_queues processTicksAndRejections [lib]',
    ],
    ['    at Module._compile (node:internal/modules/cjs/loader:1256:14)', 'loader _compile [lib]'],
    [
      '    at render (/srv/app/node_modules/react-dom/cjs/react-dom.production.min.js:1:2)',
      'react-dom.production.min.js render [lib]',
    ],
    ['    at Array.map (<anonymous>)', 'native map [lib]'],
    ['    at inject (chrome-extension://abcdefghijklmnop/content.js:1:2)', 'content.js inject [lib]'],
    [
      '    at webpackJsonpCallback (https://a.b/static/js/vendors~main.3f2a1b9c.chunk.js:1:2)',
      'vendors~main.*.chunk.js webpackJsonpCallback [lib]',
    ],
    ['    at async Promise.all (index 0)', 'native all [lib]'],
    // react-native-v8 and Hermes
    ['onPress(index.android.bundle:1:2345)', 'index.android.bundle onPress'],
    ['onPress@1:557290', 'bundle onPress'],
    [
      '    at loadOrder (address at /data/app/~~Yq3X==/com.shop-Ab==/base.apk!/assets/index.android.bundle:1:234567)',
      'index.android.bundle loadOrder',
    ],
    // Gecko and JavaScriptCore
    ['aha@file:///private/tmp/test.html:18:13', 'test.html aha'],
    ['test/<@http://localhost:4001/test.html:33:17', 'test.html 33'],
    ['async*checkout@https://a.b/app.js:1:2', 'app.js checkout'],
    ['global code@https://x/a.js:1:2', 'a.js 1'],
    ['@https://x/a.js:7:2', 'a.js 7'],
    ['https://x/a.js:7:2', 'a.js 7'],
    ['[native code]', 'native  [lib]'],
    ['map@[native code]', 'native map [lib]'],
    // JVM / Android
    ['\tat com.shop.orders.OrderRepository.load(OrderRepository.kt:57)', 'com.shop.orders.OrderRepository load'],
    ['\tat com.shop.A.b(Unknown Source)', 'com.shop.A b'],
    ['\tat com.shop.A.b(Unknown Source:4)', 'com.shop.A b'],
    ['\tat android.os.Looper.loop(Native Method)', 'android.os.Looper loop [lib]'],
    ['\tat java.base/java.lang.Thread.run(Thread.java:834)', 'java.lang.Thread run [lib]'],
    [
      '\tat kotlinx.coroutines.DispatchedTask.run(DispatchedTask.kt:108)',
      'kotlinx.coroutines.DispatchedTask run [lib]',
    ],
    ['\tat a.b.c.d(r8-map-id-8f3a2c1d:12)', 'a.b.c d'],
    // .NET
    ['   at Shop.Cart.Total() in /src/Cart.cs:line 3', 'Shop.Cart Total'],
    ['   at Shop.Cart.<LoadAsync>d__5.MoveNext() in /src/Cart.cs:line 42', 'Shop.Cart LoadAsync'],
    ['   at System.Threading.Tasks.Task.Run(Action a)', 'System.Threading.Tasks.Task Run [lib]'],
    // Apple
    ['0   MyApp                         0x0000000102a4c3f4 -[Foo bar] + 120', 'MyApp -[Foo bar]'],
    [
      '1   libsystem_kernel.dylib        \t0x00000001bd1a8c74 __pthread_kill + 8',
      'libsystem_kernel.dylib __pthread_kill [lib]',
    ],
    ['2   MyApp                         0x0000000102a4c3f4 0x102a48000 + 17396', 'MyApp 17396'],
    [
      '3   MyApp                         0x0000000102a4c3f4 OrderStore.load(id:) (in MyApp) (OrderStore.swift:12)',
      'MyApp OrderStore.load(id:)',
    ],
    ['4   libsystem_c.dylib             0x00000001a0b1c2d3 __assert_rtn + 140', 'libsystem_c.dylib __assert_rtn [lib]'],
    [
      '5   CoreFoundation                0x00000001a0b1c2d3 __CFRunLoopRun + 900',
      'CoreFoundation __CFRunLoopRun [lib]',
    ],
    // Android tombstones
    ['    #00 pc 0004c3f4  /system/lib64/libc.so (abort+120)', 'libc.so abort [lib]'],
    [
      '    #01 pc 000000000004c3f4  /data/app/~~xx/com.app-yy/lib/arm64/libapp.so (Cart::total()+12) (BuildId: abcdef)',
      'libapp.so Cart::total()',
    ],
    [
      '    #02 pc 000000000004c3f4  /data/app/~~xx/com.app-yy/lib/arm64/libapp.so (BuildId: abcdef)',
      'libapp.so 312308',
    ],
  ])('%s', (line, expected) => {
    expect(text(line)).toBe(expected);
  });

  it.each([
    'Error: foo',
    'java.lang.IllegalStateException: x',
    'Caused by: java.io.IOException',
    '\t... 12 more',
    '--- End of stack trace from previous location ---',
    'Invalid email a@b.com given',
    '',
  ])('%j is no frame', (line) => {
    expect(parseFrame(line)).toBeNull();
  });

  it("a project package is the app's even under a system prefix", () => {
    expect(text('\tat com.android.acme.Pay.go(Pay.kt:3)')).toBe('com.android.acme.Pay go [lib]');
    expect(text('\tat com.android.acme.Pay.go(Pay.kt:3)', ['com.android.acme.'])).toBe('com.android.acme.Pay go');
  });
});

describe('generated names lose their per-run part', () => {
  it.each([
    ['com.x.Foo$$Lambda$40/0x0000000800c0b440', 'com.x.Foo$$Lambda$1187/1234567', 'com.x.Foo$$Lambda'],
    ['com.x.Foo$$Lambda/0x000071b0c0a4', 'com.x.Foo$$Lambda$12/0x1', 'com.x.Foo$$Lambda'],
    ['com.x.Dao_$$_javassist_74', 'com.x.Dao_$$_javassist_91', 'com.x.Dao'],
    ['com.x.Svc$$EnhancerBySpringCGLIB$$a1b2c3d4', 'com.x.Svc$$EnhancerBySpringCGLIB$$9f8e7d6c', 'com.x.Svc'],
    ['com.x.Svc$$FastClassBySpringCGLIB$$a1b2c3d4', 'com.x.Svc$$FastClassBySpringCGLIB$$00ff00ff', 'com.x.Svc'],
    ['com.x.User$HibernateProxy$AbCdEf12', 'com.x.User$HibernateProxy$Zz9Yy8Xx', 'com.x.User'],
    [
      'jdk.internal.reflect.GeneratedMethodAccessor12',
      'jdk.internal.reflect.GeneratedMethodAccessor877',
      'jdk.internal.reflect.GeneratedMethodAccessor',
    ],
    ['com.sun.proxy.$Proxy12', 'com.sun.proxy.$Proxy45', 'com.sun.proxy.$Proxy'],
  ])('%s ~ %s', (a, b, expected) => {
    expect(jvmName(a)).toBe(expected);
    expect(jvmName(b)).toBe(expected);
  });

  it('in a frame: the same site behind two generated classes is one frame', () => {
    expect(text('\tat com.x.Foo$$Lambda$40/0x0000000800c0b440.run(Unknown Source)')).toBe(
      text('\tat com.x.Foo$$Lambda$1187/1234567.run(Unknown Source)'),
    );
    expect(text('\tat com.x.Svc$$EnhancerBySpringCGLIB$$a1b2c3d4.save(<generated>)')).toBe('com.x.Svc save');
  });

  it('Kotlin anonymous classes and lambdas keep their names (the compiler numbers them the same each build)', () => {
    expect(text('\tat com.x.Vm$refresh$1.invokeSuspend(Vm.kt:31)')).toBe('com.x.Vm$refresh$1 invokeSuspend');
    expect(text('\tat com.x.Vm$refresh$1.invokeSuspend(Vm.kt:31)')).not.toBe(
      text('\tat com.x.Vm$refresh$2.invokeSuspend(Vm.kt:31)'),
    );
  });
});

describe('the group key', () => {
  const chrome = `Error: bad
    at Object.aha (https://cdn.shop.com/assets/index-8f3a2c.js:18:13)
    at callAnotherThing (https://cdn.shop.com/assets/index-8f3a2c.js:19:16)
    at Object.callback (https://cdn.shop.com/assets/index-8f3a2c.js:24:7)
    at https://cdn.shop.com/assets/index-8f3a2c.js:33:17
    at Array.map (<anonymous>)`;
  const firefox = `aha@http://localhost:4001/assets/index-b71d09.js:18:13
callAnotherThing@http://localhost:4001/assets/index-b71d09.js:19:16
callback@http://localhost:4001/assets/index-b71d09.js:24:7
test/<@http://localhost:4001/assets/index-b71d09.js:33:17
test@http://localhost:4001/assets/index-b71d09.js:32:23`;
  const safari = `aha@https://cdn.shop.com/assets/index-8f3a2c.js:18:22
aha@[native code]
callAnotherThing@https://cdn.shop.com/assets/index-8f3a2c.js:19:16
callback@https://cdn.shop.com/assets/index-8f3a2c.js:24:23
https://cdn.shop.com/assets/index-8f3a2c.js:33:25`;

  it('Chrome, Firefox and Safari stacks of one throw, from two hosts and two builds, hash alike', () => {
    const k = crashGroupKey(chrome, 'bad');
    expect(crashGroupKey(firefox, 'bad')).toBe(k);
    expect(crashGroupKey(safari, 'bad')).toBe(k);
  });

  it('Error: foo and Error: bar at one site stay two groups; ids, numbers and quoted values do not split', () => {
    const at = '\n    at load (https://a.b/app.js:1:2)\n    at run (https://a.b/app.js:3:4)';
    expect(crashGroupKey(`Error: foo${at}`)).not.toBe(crashGroupKey(`Error: bar${at}`));
    expect(crashGroupKey(`TypeError: x${at}`)).not.toBe(crashGroupKey(`RangeError: x${at}`));
    expect(crashGroupKey(`Error: Order 1042 not found${at}`)).toBe(crashGroupKey(`Error: Order 7 not found${at}`));
    expect(crashGroupKey(`SyntaxError: Unexpected token '<', "<!DOCTYPE "... is not valid JSON${at}`)).toBe(
      crashGroupKey(`SyntaxError: Unexpected token 'o', "ok" is not valid JSON${at}`),
    );
    // The Gecko stack carries no message: the report's message tells two bugs apart there.
    expect(crashGroupKey('load@https://a.b/app.js:1:2', 'foo')).not.toBe(
      crashGroupKey('load@https://a.b/app.js:1:2', 'bar'),
    );
  });

  it('code that moved two lines in a release is one group; two sites of an anonymous function are two', () => {
    const jvm = (l: number) =>
      `java.lang.IllegalStateException: boom\n\tat com.shop.Repo.load(Repo.kt:${l})\n\tat android.os.Handler.handleCallback(Handler.java:${l + 900})`;
    expect(crashGroupKey(jvm(57))).toBe(crashGroupKey(jvm(59)));
    expect(crashGroupKey('Error: x\n    at https://a.b/app.js:10:2')).not.toBe(
      crashGroupKey('Error: x\n    at https://a.b/app.js:20:2'),
    );
  });

  it('leaves system frames out while an app frame remains: framework line numbers per OS release do not split', () => {
    const android = (os: number) => `java.lang.NullPointerException: x
\tat android.view.View.performClick(View.java:${7448 + os})
\tat com.shop.Cart.onClick(Cart.kt:12)
\tat android.os.Handler.handleCallback(Handler.java:${938 + os})
\tat android.os.Looper.loop(Looper.java:${223 + os})`;
    expect(crashGroupKey(android(0))).toBe(crashGroupKey(android(5)));
    expect(groupKey(android(0), '').text).toBe('v2\njava.lang.NullPointerException: x\ncom.shop.Cart onClick');
  });

  const assert = (
    os: string,
    app: string,
  ) => `0   libsystem_kernel.dylib        0x00000001bd1a8c74 __pthread_kill + ${os === '16' ? 8 : 12}
1   libsystem_pthread.dylib       0x00000001d6e0f0f4 pthread_kill + 268
2   libsystem_c.dylib             0x00000001a0b1c2d3 abort + ${os === '16' ? 180 : 168}
3   libsystem_c.dylib             0x00000001a0b1c2d3 __assert_rtn + 272
4   CoreFoundation                0x00000001a0b1c2d3 __CFRunLoopRun + 900
5   MyApp                         0x0000000102a4c3f4 ${app} + 120
6   MyApp                         0x0000000102a4c3f4 main + 40`;

  it('a native assert deep in libsystem: one group across OS versions, two app asserts stay apart', () => {
    expect(crashGroupKey(assert('16', '-[Cart total]'), 'SIGABRT')).toBe(
      crashGroupKey(assert('17', '-[Cart total]'), 'SIGABRT'),
    );
    expect(crashGroupKey(assert('16', '-[Cart total]'), 'SIGABRT')).not.toBe(
      crashGroupKey(assert('16', '-[Login submit]'), 'SIGABRT'),
    );
    expect(groupKey(assert('16', '-[Cart total]'), 'SIGABRT').text).toBe(
      'v2\n<signal>\nMyApp -[Cart total]\nMyApp main',
    );
  });

  it('keeps the contract: the same first five lines are one group (nothing after line 5 counts while an app frame is in them)', () => {
    const head =
      'Error: x\n    at a (https://a.b/app.js:1:2)\n    at b (https://a.b/app.js:1:3)\n    at c (https://a.b/app.js:1:4)\n    at d (https://a.b/app.js:1:5)';
    expect(crashGroupKey(`${head}\n    at e (https://a.b/app.js:1:6)`)).toBe(
      crashGroupKey(`${head}\n    at f (https://a.b/other.js:9:9)`),
    );
  });

  it("a stack with no parsed frame keeps the previous rule's key", () => {
    const s = 'Something odd happened 42\nno frames here';
    expect(crashGroupKey(s)).toBe(legacyGroupKey(s));
    expect(groupKey(s, '').source).toBe('lines');
  });

  it("a chunk-load failure is one group whatever chunk, in every bundler's words", () => {
    const k = crashGroupKey('ChunkLoadError: Loading chunk 123 failed.\n    at a (https://a.b/runtime.js:1:2)');
    for (const [stack, msg] of [
      [
        'ChunkLoadError: Loading chunk vendors-node_modules_x failed.\n(missing: https://a.b/x.js)\n    at b (https://a.b/main.js:1:2)',
        '',
      ],
      ['Error: Loading CSS chunk 77 failed.\n    at c (https://a.b/main.js:1:2)', ''],
      ['TypeError: Failed to fetch dynamically imported module: https://a.b/assets/Page-B_2kZ-9x.js', ''],
      ['', 'TypeError: error loading dynamically imported module: https://a.b/assets/Page.js'],
      ['@https://a.b/main.js:1:2', 'TypeError: Importing a module script failed.'],
    ])
      expect(crashGroupKey(stack!, msg)).toBe(k);
  });

  it('a valid fingerprint replaces the key; {{default}} stands for the default key; an invalid one is ignored', () => {
    const s = 'Error: x\n    at a (https://a.b/app.js:1:2)';
    const t = 'Error: y\n    at b (https://a.b/app.js:1:2)';
    expect(crashGroupKey(s, '', { fingerprint: ['payments'] })).toBe(
      crashGroupKey(t, '', { fingerprint: ['payments'] }),
    );
    expect(crashGroupKey(s, '', { fingerprint: ['payments'] })).not.toBe(crashGroupKey(s));
    expect(crashGroupKey(s, '', { fingerprint: ['{{default}}', 'eu'] })).not.toBe(
      crashGroupKey(t, '', { fingerprint: ['{{default}}', 'eu'] }),
    );
    expect(crashGroupKey(s, '', { fingerprint: ['{{default}}', 'eu'] })).not.toBe(
      crashGroupKey(s, '', { fingerprint: ['{{default}}', 'us'] }),
    );
    for (const bad of [[], 'x', [1], ['a'.repeat(201)], Array(11).fill('a'), null, { a: 1 }]) {
      expect(validFingerprint(bad)).toBeNull();
      expect(crashGroupKey(s, '', { fingerprint: bad })).toBe(crashGroupKey(s));
    }
  });

  it('reads long adversarial lines in linear time (every line is cut to MAX_LINE_CHARS first)', () => {
    const long = (unit: string) => unit.repeat(Math.ceil(300_000 / unit.length));
    const lines = [
      `at ${long('a (')}`,
      `at ${long(') in ')}:line 1`,
      long('a@'),
      long('0 x 0x1 '),
      `#00 pc 1 /a.so ${long('(x')}`,
      `1 ${long(' 0xa')}`,
      long(':1'),
      long("'a"),
      long('<'),
      `at ${long('a.')}(${long('b:')}`,
      long('$$Lambda$1/'),
      `Error: ${long('"a')}`,
      `at x.${long('$$AbBy$$')}.m(F.java:1)`,
      long('\t at '),
      `#1 ${long('a (')}`,
    ];
    const stack = lines.join('\n');
    // One pass over every line: the work is bounded by MAX_LINE_CHARS per line, whatever a client sends.
    for (const l of lines) expect(parseFrame(l) === null || typeof parseFrame(l) === 'object').toBe(true);
    expect(crashGroupKey(stack, long('m'))).toMatch(/^[0-9a-f]{64}$/);
    expect(MAX_LINE_CHARS).toBe(1024);
  });

  const report = (o: {
    id: string;
    model: string;
    os: string;
    slide: string;
    abortOff: number;
    app: string;
    thread0App: string;
  }) => `Incident Identifier: ${o.id}
CrashReporter Key:   8f3a2c1d9e0b7a6c5d4e3f2a1b0c9d8e7f6a5b4c
Hardware Model:      ${o.model}
Process:             MyApp [${o.abortOff * 7}]
Path:                /private/var/containers/Bundle/Application/${o.id}/MyApp.app/MyApp
Identifier:          com.acme.MyApp
Version:             4.2 (420)
OS Version:          iPhone OS ${o.os}

Exception Type:  EXC_CRASH (SIGABRT)
Exception Codes: 0x0000000000000000, 0x0000000000000000
Triggered by Thread:  2

Thread 0 name:  Dispatch queue: com.apple.main-thread
Thread 0:
0   libsystem_kernel.dylib        	0x00000001e0a0e1b8 mach_msg_trap + 8
1   CoreFoundation                	0x00000001a0b1c2d3 __CFRunLoopRun + 900
2   MyApp                         	${o.slide} ${o.thread0App} + 40

Thread 2 Crashed:
0   libsystem_kernel.dylib        	0x00000001e0a0e1b8 __pthread_kill + ${o.abortOff}
1   libsystem_pthread.dylib       	0x0000000200b1ef70 pthread_kill + 288
2   libsystem_c.dylib             	0x00000001b0b6b75c abort + 180
3   libsystem_c.dylib             	0x00000001b0b1ecd0 __assert_rtn + 284
4   MyApp                         	${o.slide} ${o.app} + 120
5   MyApp                         	${o.slide} -[SyncEngine run] + 64
6   libdispatch.dylib             	0x00000001a9b8c2d3 _dispatch_call_block_and_release + 32`;

  it('whole Apple crash reports: one assert on two devices and OS versions is one group; another assert is another', () => {
    const a = report({
      id: '6F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0',
      model: 'iPhone14,2',
      os: '16.4 (20E247)',
      slide: '0x0000000102a4c3f4',
      abortOff: 8,
      app: '-[Cart total]',
      thread0App: 'main',
    });
    const b = report({
      id: '0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9',
      model: 'iPhone15,3',
      os: '17.2 (21C62)',
      slide: '0x0000000104b8d3e4',
      abortOff: 12,
      app: '-[Cart total]',
      thread0App: 'main',
    });
    const c = report({
      id: '0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9',
      model: 'iPhone15,3',
      os: '17.2 (21C62)',
      slide: '0x0000000104b8d3e4',
      abortOff: 12,
      app: '-[Login submit]',
      thread0App: 'main',
    });
    expect(crashGroupKey(a, 'SIGABRT')).toBe(crashGroupKey(b, 'SIGABRT'));
    expect(crashGroupKey(a, 'SIGABRT')).not.toBe(crashGroupKey(c, 'SIGABRT'));
    // Another reporter words the signal alone, and another CPU raises another signal: one bug still.
    expect(crashGroupKey(a.replace('EXC_CRASH (SIGABRT)', 'EXC_BAD_ACCESS (SIGBUS)'), 'SIGBUS')).toBe(
      crashGroupKey(a, 'SIGABRT'),
    );
    expect(groupKey(a, 'SIGABRT').text).toBe('v2\n<signal>\nMyApp -[Cart total]');
  });

  it('a native signal is one placeholder; other messages stay', () => {
    const f = '\n0   MyApp   0x0000000102a4c3f4 -[Cart total] + 12';
    for (const m of [
      'SIGSEGV',
      'EXC_BAD_ACCESS (SIGSEGV)',
      'EXC_BAD_INSTRUCTION (SIGILL)',
      'EXC_CRASH (SIGABRT)',
      'SIGBUS',
    ]) {
      expect(groupKey(`${m}${f}`, '').text).toBe('v2\n<signal>\nMyApp -[Cart total]');
    }
    expect(groupKey(`SIGSEGV in parser${f}`, '').text).toBe('v2\nSIGSEGV in parser\nMyApp -[Cart total]');
  });

  it('frames only after a long message: read from the first app frame', () => {
    const msg = 'Error: line one\nline two\nline three\nline four\nline five';
    const s1 = `${msg}\n    at load (https://a.b/app.js:1:2)`;
    expect(groupKey(s1, '').source).toBe('frames');
    expect(groupKey(s1, '').text).toBe('v2\nline one\napp.js load');
  });
});
