/**
 * Stack frames of every runtime the SDKs report from, read into one shape: the module (a script's
 * path, a JVM or .NET class, a native image), the function, line and column, and whether the app
 * owns it. The group key writes each frame as `module function` (docs/decisions.md, "One bug, one
 * group"), so the same throw reads alike in Chrome, Firefox and Safari, from localhost or a CDN,
 * before and after a rebuild. Every line is cut to MAX_LINE_CHARS first and read with string
 * operations or patterns that run in linear time.
 */
import { MAX_LINE_CHARS, normaliseFrame } from '../stackNormalise.ts';
import { isAppFrame, type FrameKind } from './systemFrames.ts';
import { present } from '../../lib/invariant.ts';

export interface Frame {
  kind: FrameKind;
  /** Script file name without scheme, host, directories, query and content hash; class; native image. */
  module: string;
  /** Without runtime prefixes and generated-name markers; null when the frame names none. */
  function: string | null;
  line: number | null;
  column: number | null;
  inApp: boolean;
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** `file:12:3` → [file, 12, 3]; `file:12` → [file, 12, null]; no trailing number → null. */
function trailingPosition(loc: string): [string, number, number | null] | null {
  const a = trailingNumber(loc);
  if (!a) return null;
  const b = trailingNumber(a[0]);
  return b ? [b[0], b[1], a[1]] : [a[0], a[1], null];
}
function trailingNumber(s: string): [string, number] | null {
  let i = s.length;
  while (i > 0 && isDigit(s[i - 1])) i--;
  if (i === s.length || i === 0 || s[i - 1] !== ':') return null;
  return [s.slice(0, i - 1), Number(s.slice(i))];
}

// ---------------------------------------------------------------------------------------------
// JavaScript
// ---------------------------------------------------------------------------------------------

const SCHEME_HOST = /^[a-z][a-z0-9+.-]{0,31}:\/\/[^/]*/i;

/** The path of a script URL as the key reads it: no scheme, host, query, content hash, per-install part. */
export function jsModule(file: string): string {
  let p = file.replace(/\\/g, '/');
  if (p.startsWith('blob:')) p = p.slice(5);
  p = p.replace(SCHEME_HOST, '');
  const q = p.search(/[?#]/);
  if (q >= 0) p = p.slice(0, q);
  p = p.replace(/^\/private\/(?=tmp\/|var\/|etc\/)/, '/');
  const bang = p.lastIndexOf('!/');
  if (bang >= 0) p = p.slice(bang + 2);
  p = normaliseFrame(p);
  // The file alone: its directories tell apart nothing a deploy does not move (a CDN prefix, a
  // version directory, the install or checkout path, a test page's folder).
  const segments = p.split('/').filter((s) => s !== '' && s !== '.');
  return segments.at(-1) ?? '';
}

const ANON_JS = new Set([
  '',
  '<anonymous>',
  'anonymous',
  'global code',
  'eval code',
  'module code',
  '<computed>',
  'Anonymous function',
]);

/** A JavaScript function name as the engines print it → the name the key reads. */
export function jsFunction(raw: string | null): string | null {
  if (raw === null) return null;
  let f = raw.trim();
  const as = f.indexOf(' [as ');
  if (as >= 0) f = f.slice(0, as);
  const star = f.lastIndexOf('*'); // Firefox's async*fn, promise callback*fn
  if (star >= 0) f = f.slice(star + 1);
  for (;;) {
    const next = f.replace(/^(?:async|new) +/, '');
    if (next === f) break;
    f = next;
  }
  if (ANON_JS.has(f)) return null;
  // Firefox nests: outer/inner, outer/< (an anonymous function in outer).
  const slash = f.lastIndexOf('/');
  if (slash >= 0) f = f.slice(slash + 1);
  let end = f.length;
  while (end > 0 && f[end - 1] === '<') end--;
  f = f.slice(0, end);
  // V8 names methods by their receiver (Object.fn, HTMLButtonElement.onclick, Foo.bar), Gecko and
  // JavaScriptCore by the function alone: the key reads the function alone.
  const dot = f.lastIndexOf('.');
  if (dot >= 0) f = f.slice(dot + 1);
  return ANON_JS.has(f) || f.startsWith('<') ? null : f;
}

function jsFrame(fnRaw: string | null, loc: string, inApp: readonly string[]): Frame {
  let l = loc.trim();
  if (l.startsWith('address at ')) l = l.slice('address at '.length); // Hermes
  // eval frames: "eval at fn (url:1:2), <anonymous>:3:4": the script that ran the eval.
  const evalAt = l.startsWith('eval at ') ? l.indexOf(' (') : -1;
  if (evalAt >= 0) {
    const close = l.indexOf(')', evalAt);
    if (close > evalAt) l = l.slice(evalAt + 2, close);
  }
  const pos = trailingPosition(l);
  const file = pos ? pos[0] : l;
  const fn = jsFunction(fnRaw);
  const location = file.replace(SCHEME_HOST, '');
  const native =
    !pos && (file === 'native' || file === '[native code]' || file.startsWith('index ') || file === '<anonymous>');
  return {
    kind: 'js',
    module: native ? 'native' : file === '' ? 'bundle' : jsModule(file),
    function: fn,
    line: pos ? pos[1] : null,
    // The column of one anonymous frame differs between engines (JavaScriptCore points at another
    // token of the line): an anonymous frame is told apart by its line.
    column: null,
    // A browser extension's script is not the app's, whatever its path (its scheme says so).
    inApp:
      !native &&
      (file === '' ||
        (isAppFrame('js', file.startsWith('node:') ? file : location, fn, inApp) &&
          !/^(?:chrome|moz|safari(?:-web)?)-extension:/.test(file))),
  };
}

// Gecko and JavaScriptCore: "fn@url:1:2", "@url:1:2", "global code@url:1:2", "fn@[native code]",
// Hermes without a source URL "fn@1:557290".
function parseGecko(s: string, inApp: readonly string[]): Frame | null {
  const at = s.indexOf('@');
  if (at < 0) return null;
  const fn = s.slice(0, at);
  const loc = s.slice(at + 1);
  if (/\s/.test(fn) && !/^(?:global|eval|module) code$/.test(fn) && !fn.includes('*')) return null;
  if (loc === '[native code]')
    return { kind: 'js', module: 'native', function: jsFunction(fn), line: null, column: null, inApp: false };
  if (/\s/.test(loc) || loc === '') return null;
  const pos = trailingPosition(loc);
  if (!pos && !SCHEME_HOST.test(loc)) return null;
  // Hermes without a source URL: line 1 of the app's one bundle, the column a bytecode offset.
  if (pos && /^\d+$/.test(pos[0])) return jsFrame(fn, `:${loc}`, inApp);
  return jsFrame(fn, loc, inApp);
}

// JavaScriptCore's bare frames ("https://x/a.js:1:2", an anonymous function) and React Native
// V8's "fn(url:1:2)".
function parseBareJs(s: string, inApp: readonly string[]): Frame | null {
  if (s === '[native code]')
    return { kind: 'js', module: 'native', function: null, line: null, column: null, inApp: false };
  if (/\s/.test(s)) return null;
  const open = s.indexOf('(');
  if (open > 0 && s.endsWith(')')) {
    const loc = s.slice(open + 1, -1);
    return trailingPosition(loc) ? jsFrame(s.slice(0, open), loc, inApp) : null;
  }
  if ((SCHEME_HOST.test(s) || s.startsWith('/')) && trailingPosition(s)) return jsFrame(null, s, inApp);
  return null;
}

// ---------------------------------------------------------------------------------------------
// JVM / Android and .NET
// ---------------------------------------------------------------------------------------------

/**
 * Generated class and method names whose numbers or hashes differ per run or per build: the
 * marker goes (or its number), what it was generated from stays.
 */
export function jvmName(name: string): string {
  return name
    .replace(/\$\$Lambda(?:\$\d+)?(?:\/(?:0x)?[0-9a-f]+)?/gi, '$$$$Lambda') // $$Lambda$40/0x…, $$Lambda/0x… (JDK 21)
    .replace(/_\$\$_javassist_\d+(?:_\d+)?/g, '')
    .replace(/_\$\$_jvst[0-9a-f]+_[0-9a-f]+/g, '')
    .replace(/\$\$[A-Za-z]{1,64}\$\$[0-9a-f]{1,40}(?:_\d+)?/g, '') // $$EnhancerBySpringCGLIB$$…, $$FastClassBySpringCGLIB$$…
    .replace(/\$HibernateProxy\$[A-Za-z0-9]{1,64}/g, '')
    .replace(/\$MockitoMock\$\d+/g, '')
    .replace(/\$ByteBuddy\$[A-Za-z0-9]{1,64}/g, '')
    .replace(/\bGenerated(Method|Constructor|SerializationConstructor)Accessor\d+/g, 'Generated$1Accessor')
    .replace(/\$Proxy\d+/g, '$$Proxy')
    .replace(/\bjdk\.proxy\d+\./g, 'jdk.proxy.');
}

function splitQualified(q: string): [string, string] {
  const dot = q.lastIndexOf('.');
  return dot < 0 ? ['', q] : [q.slice(0, dot), q.slice(dot + 1)];
}

// Inside a JVM frame's parentheses: a file and line, or the VM's words for none.
const JVM_PLACE = /^(?:Native Method|Unknown Source(?::\d+)?|[^\s():]+(?::\d+)?)$/;

function parseJvmOrDotnet(rest: string, inApp: readonly string[]): Frame | null {
  const open = rest.indexOf('(');
  if (open <= 0) return null;
  const close = rest.indexOf(')', open);
  if (close < 0) return null;
  const inside = rest.slice(open + 1, close);
  const after = rest.slice(close + 1).trim();
  let qualified = rest.slice(0, open);
  if (/\s/.test(qualified)) return null;
  if (after === '' && inside !== '' && JVM_PLACE.test(inside)) {
    qualified = jvmName(qualified);
    // Java 9+ module prefixes: "java.base/java.lang.Thread.run", "app//com.x.Y.m".
    const slash = qualified.lastIndexOf('/');
    if (slash >= 0) qualified = qualified.slice(slash + 1);
    const [cls, fn] = splitQualified(qualified);
    const line = trailingNumber(inside);
    return {
      kind: 'jvm',
      module: cls,
      function: fn || null,
      line: line ? line[1] : null,
      column: null,
      inApp: isAppFrame('jvm', cls, fn, inApp),
    };
  }
  // .NET: "N.C.M(String s) in f.cs:line 3", "N.C.<M>d__5.MoveNext()", "N.C.M[T](T x)".
  if (after !== '' && !/^in .+:line \d+$/.test(after)) return null;
  let q = qualified.replace(/\[[^\][]{0,200}\]$/, '').replace(/`\d+/g, '');
  q = q.replace(/\.<([^<>]{1,200})>d__\d+\.MoveNext$/, '.$1'); // an async method's state machine
  q = q.replace(/<([^<>]{1,200})>b__[\d_]+$/, '$1'); // a lambda in M
  q = q.replace(/\.<>c(?:__DisplayClass[\d_]+)?(?=\.)/g, '');
  const [cls, fn] = splitQualified(q);
  const lineAt = after.lastIndexOf(':line ');
  const line = lineAt >= 0 ? Number(after.slice(lineAt + 6)) : null;
  return {
    kind: 'dotnet',
    module: cls,
    function: fn || null,
    line,
    column: null,
    inApp: isAppFrame('dotnet', cls, fn, inApp),
  };
}

// ---------------------------------------------------------------------------------------------
// Native: Apple crash reports, Android tombstones
// ---------------------------------------------------------------------------------------------

const APPLE_ADDRESS = /\s(0x[0-9a-f]+)(?=\s)/i;

/** `0   MyApp   0x0000000102a4c3f4 -[Foo bar] + 120`, `1 libsystem_kernel.dylib 0x… __pthread_kill + 8`. */
function parseApple(s: string, inApp: readonly string[]): Frame | null {
  let i = 0;
  while (isDigit(s[i])) i++;
  if (i === 0 || !/\s/.test(s[i] ?? '')) return null;
  const m = APPLE_ADDRESS.exec(s);
  if (!m || m.index < i) return null;
  const image = s.slice(i, m.index).trim();
  if (image === '') return null;
  let symbol = s.slice(m.index + 1 + present(m[1], 'Apple frame address group').length).trim();
  // atos and symbolicated reports: "sym (in Image) (File.swift:12)", "sym (File.swift:12) [inlined]".
  symbol = symbol
    .replace(/\s\[inlined\]$/, '')
    .replace(/\s\([^()]{0,300}:\d+\)$/, '')
    .replace(/\s\(in [^()]{1,200}\)$/, '');
  let offset: number | null = null;
  const plus = /\s\+\s(\d+)$/.exec(symbol);
  if (plus) {
    offset = Number(plus[1]);
    symbol = symbol.slice(0, plus.index).trim();
  }
  // Unsymbolicated: "0x102a48000 + 17396" (load address + offset in the image), or the image name again.
  const named = symbol !== '' && !/^0x[0-9a-f]+$/i.test(symbol) && symbol !== image;
  const fn = named ? symbol : null;
  return {
    kind: 'native',
    module: image,
    function: fn,
    line: named ? null : offset,
    column: null,
    inApp: isAppFrame('native', image, fn, inApp),
  };
}

const TOMBSTONE = /^#\d+\s+pc\s+([0-9a-f]+)\s+(\S+)(.*)$/i;

/** `#00 pc 0004c3f4  /system/lib64/libc.so (abort+120) (BuildId: …)`. */
function parseTombstone(s: string, inApp: readonly string[]): Frame | null {
  const m = TOMBSTONE.exec(s);
  if (!m) return null;
  const path = present(m[2], 'tombstone path group');
  // After the path: "(offset 0x1000)", the symbol "(Cart::total()+120)" (parentheses inside), "(BuildId: …)".
  const rest = present(m[3], 'tombstone rest group')
    .trim()
    .replace(/\s*\(BuildId: [^()]{0,200}\)$/, '')
    .replace(/^\(offset 0x[0-9a-f]+\)\s*/i, '');
  const fn =
    rest.startsWith('(') && rest.endsWith(')') && rest.length > 2 ? rest.slice(1, -1).replace(/\+\d+$/, '') : null;
  const image = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('!')) + 1);
  return {
    kind: 'native',
    module: image,
    function: fn,
    line: fn ? null : parseInt(present(m[1], 'tombstone pc group'), 16),
    column: null,
    inApp: isAppFrame('native', path, fn, inApp),
  };
}

// ---------------------------------------------------------------------------------------------

/**
 * One stack line as a frame, or null when it is none (a message line, `Caused by:`, `... 12
 * more`, a .NET `--- End of …` line). `inAppPackages`: the project's own module/class prefixes.
 */
export function parseFrame(raw: string, inAppPackages: readonly string[] = []): Frame | null {
  const s = (raw.length > MAX_LINE_CHARS ? raw.slice(0, MAX_LINE_CHARS) : raw).trim();
  if (s === '') return null;
  if (s.startsWith('at ')) {
    const rest = s.slice(3).trim();
    if (rest.endsWith(')')) {
      const sp = rest.indexOf(' (');
      const paren = rest.indexOf('(');
      if (sp >= 0 && sp < paren) return jsFrame(rest.slice(0, sp), rest.slice(sp + 2, -1), inAppPackages);
      const jd = parseJvmOrDotnet(rest, inAppPackages);
      if (jd) return jd;
      // V8 with a parenthesised name ("at fn(x) (url:1:2)") is not printed; an unparsed "at" line stays a line.
      return null;
    }
    const dotnetIn = rest.lastIndexOf(') in ');
    if (dotnetIn > 0 && /:line \d+$/.test(rest)) return parseJvmOrDotnet(rest, inAppPackages);
    if (/\s/.test(rest)) return null;
    return jsFrame(null, rest, inAppPackages); // "at url:1:2", "at native"
  }
  if (s.startsWith('#')) {
    if (/^#\d+\s+pc\s/i.test(s)) return parseTombstone(s, inAppPackages);
    // Dart: "#0      main (package:app/main.dart:12:3)".
    const body = s.replace(/^#\d+\s+/, '');
    const sp = body.lastIndexOf(' (');
    if (body === s || sp <= 0 || !body.endsWith(')')) return null;
    const loc = body.slice(sp + 2, -1);
    return /\s/.test(loc) || !trailingPosition(loc) ? null : jsFrame(body.slice(0, sp), loc, inAppPackages);
  }
  if (isDigit(s[0])) {
    const apple = parseApple(s, inAppPackages);
    if (apple) return apple;
  }
  return parseGecko(s, inAppPackages) ?? parseBareJs(s, inAppPackages);
}

/** A frame as the key writes it: `module function`; an anonymous one by where it is. */
export function frameText(f: Frame): string {
  if (f.function !== null) return `${f.module} ${f.function}`;
  return `${f.module} ${f.line ?? ''}${f.column === null ? '' : `:${f.column}`}`;
}
