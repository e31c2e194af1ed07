/**
 * JavaScript stack frames as V8 (Chrome, Node, Electron), Hermes (React Native), SpiderMonkey
 * (Firefox) and JavaScriptCore (Safari) print them: parsed into function, file, line and column,
 * and printed back in the same syntax once symbolicated.
 */
import { MAX_LINE_CHARS } from '../stackNormalise.ts';
import { present } from '../../lib/invariant.ts';

export interface JsFrame {
  /**
   * The frame's syntax, kept when it is printed back: V8's `at fn (url:l:c)`, Gecko's
   * `fn@url:l:c`, JavaScriptCore's bare `url:l:c`, React Native V8's `fn(url:l:c)`.
   */
  style: 'v8' | 'gecko' | 'bare' | 'rnv8';
  indent: string;
  fn: string | null;
  file: string;
  line: number;
  /** 1-based, as the engines print it */
  column: number | null;
  /** a Hermes frame without a file (`fn@1:557290`): in the app's one bundle */
  implicitFile?: boolean;
}

/** The path jsFilesOf and mapFor use for Hermes frames that name no file (the app's bundle). */
export const IMPLICIT_BUNDLE = '';

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** Index just past a run of digits ending at `end` (exclusive), or `end` when there is none. */
function digitsFrom(s: string, end: number): number {
  let i = end;
  while (i > 0 && isDigit(s.charCodeAt(i - 1))) i--;
  return i;
}

// JavaScriptCore's anonymous frame: a bare URL or path with its line and column.
// The path is taken up to the first `:line(:column)` that ends the line (each colon tried once).
const BARE = /^(\s*)((?:[a-z][a-z0-9+.-]{0,31}:\/\/|\/)\S+?):(\d+)(?::(\d+))?\s*$/i;
// React Native V8 (no `at`, no space): "onPress(index.android.bundle:1:2345)".
const RN_V8 = /^(\s*)([^\s()@]+)\(([^\s()]+):(\d+):(\d+)\)\s*$/;

/**
 * "file:12:5" / "file:12" read from the end: the shortest file such that a line (and column)
 * follow, as the patterns `(.+?):(\d+)(?::(\d+))?$` read it, in one backward pass.
 */
function location(s: string): { file: string; line: number; column: number | null } | null {
  const b = digitsFrom(s, s.length);
  if (b === s.length || b < 2 || s.charCodeAt(b - 1) !== 0x3a) return null;
  const a = digitsFrom(s, b - 1);
  if (a < b - 1 && a >= 2 && s.charCodeAt(a - 1) === 0x3a) {
    return { file: s.slice(0, a - 1), line: Number(s.slice(a, b - 1)), column: Number(s.slice(b)) };
  }
  return { file: s.slice(0, b - 1), line: Number(s.slice(b)), column: null };
}

/**
 * One stack line as a frame, or null. Read by hand rather than with patterns: the V8 pattern this
 * replaces (`at (?:(.+?) \()?(.+?):(\d+)…`) tried every pair of split points, quadratic in the
 * line's length. The syntaxes:
 * - V8 / Hermes: "at fn (file:1:2)", "at async fn (file:1:2)", "at file:1:2", "at fn (address at file:1:2)";
 * - Firefox / Safari: "fn@file:1:2", "@file:1:2", Safari's "global code@file:1:2";
 * - Hermes without a source URL: "fn@1:557290" (line 1 of the bundle, column = bytecode offset).
 */
export function parseJsFrame(line: string): JsFrame | null {
  // no frame is that long: a longer line is not read (stackNormalise.ts cuts lines there too)
  if (line.length > MAX_LINE_CHARS) return null;
  // trim's white space is the patterns' \s
  const body = line.trim();
  const indent = line.slice(0, line.length - line.trimStart().length);
  // no part of a frame spans a line terminator (the patterns' `.`)
  if (/[\n\r\u2028\u2029]/.test(body)) return null;

  const at = body.indexOf('@');
  if (at >= 0) {
    const fn = body.slice(0, at);
    const after = body.slice(at + 1);
    const plain = !/\s/.test(fn);
    if (plain && /^\d+:\d+$/.test(after)) {
      const colon = after.indexOf(':');
      return {
        style: 'gecko',
        indent,
        fn: fn || null,
        file: IMPLICIT_BUNDLE,
        line: Number(after.slice(0, colon)),
        column: Number(after.slice(colon + 1)),
        implicitFile: true,
      };
    }
    const loc = plain || fn === 'global code' || fn === 'eval code' || fn === 'module code' ? location(after) : null;
    if (loc && loc.file.length > 0 && !body.startsWith('at ')) {
      return { style: 'gecko', indent, fn: fn || null, file: loc.file, line: loc.line, column: loc.column };
    }
  }
  if (!body.startsWith('at ')) {
    const r = RN_V8.exec(line);
    if (r)
      return {
        style: 'rnv8',
        indent: r[1] ?? '',
        fn: present(r[2], 'RN_V8 function group'),
        file: present(r[3], 'RN_V8 file group'),
        line: Number(r[4]),
        column: Number(r[5]),
      };
    const x = BARE.exec(line);
    if (x)
      return {
        style: 'bare',
        indent: x[1] ?? '',
        fn: null,
        file: present(x[2], 'BARE file group'),
        line: Number(x[3]),
        column: x[4] === undefined ? null : Number(x[4]),
      };
    return null;
  }
  const rest = body.endsWith(')') ? body.slice(3, -1) : body.slice(3);
  const loc = location(rest);
  if (!loc || loc.file.length === 0) return null;
  // the function is everything before the first " (" that leaves a file after it
  const open = loc.file.indexOf(' (', 1);
  let fn: string | null = null;
  let file = loc.file;
  if (open > 0 && open + 2 < loc.file.length) {
    fn = loc.file.slice(0, open);
    file = loc.file.slice(open + 2);
  }
  if (file.startsWith('address at ') && file.length > 'address at '.length) file = file.slice('address at '.length);
  return { style: 'v8', indent, fn, file, line: loc.line, column: loc.column };
}

export function printJsFrame(f: JsFrame): string {
  const at = `${f.file}:${f.line}${f.column === null ? '' : `:${f.column}`}`;
  if (f.style === 'gecko') return `${f.indent}${f.fn ?? ''}@${at}`;
  // Once mapped, a named frame of these syntaxes is written as its engine would name it.
  if (f.style === 'bare') return f.fn ? `${f.indent}${f.fn}@${at}` : `${f.indent}${at}`;
  if (f.style === 'rnv8') return f.fn ? `${f.indent}${f.fn}(${at})` : `${f.indent}at ${at}`;
  return f.fn ? `${f.indent}at ${f.fn} (${at})` : `${f.indent}at ${at}`;
}

/**
 * The path part of a frame's file, as artifact names are matched against it: no scheme and
 * host (http(s), app://, file://), no query string or fragment, no Windows drive backslashes.
 */
export function framePath(file: string): string {
  let p = file.replace(/\\/g, '/');
  const url = /^[a-z][a-z0-9+.-]*:\/\/[^/]*(\/.*)?$/i.exec(p);
  if (url) p = url[1] ?? '/';
  p = p.replace(/[?#].*$/, '');
  try {
    p = decodeURI(p);
  } catch {
    // a malformed escape stays as written
  }
  return p;
}

const segments = (p: string) =>
  p
    .replace(/^~\//, '')
    .replace(/^\.\//, '')
    .split('/')
    .filter((s) => s !== '' && s !== '.');

/**
 * How well an uploaded artifact's name matches a frame's path (Sentry's rule): a `~/`-prefixed
 * or relative name matches any host and any leading directories when its segments end the
 * path's; a bare file name matches by base name. The score is the number of matching segments
 * (0: no match), so the most specific upload wins.
 */
export function nameMatchScore(artifactName: string, path: string): number {
  const a = segments(framePath(artifactName));
  const p = segments(path);
  if (a.length === 0 || a.length > p.length) return 0;
  for (let i = 1; i <= a.length; i++) {
    if (a[a.length - i] !== p[p.length - i]) return 0;
  }
  return a.length;
}

/** The best-matching name among `names`, or null. */
export function bestMatch(names: Iterable<string>, path: string): string | null {
  let best: string | null = null;
  let score = 0;
  for (const n of names) {
    const s = nameMatchScore(n, path);
    if (s > score) {
      best = n;
      score = s;
    }
  }
  return best;
}

/** The `//# sourceMappingURL=` of a minified source (its last one), or null; data: URLs are not followed. */
export function sourceMappingUrl(source: string): string | null {
  const tail = source.slice(-4096);
  const all = [...tail.matchAll(/\/\/[#@]\s*sourceMappingURL=(\S+)\s*$/gm)];
  const u = all.at(-1)?.[1];
  return u && !u.startsWith('data:') ? u : null;
}

/** A sourceMappingURL resolved against the minified file's path ("index.js.map" next to "assets/index.js"). */
export function resolveBeside(filePath: string, ref: string): string {
  const r = framePath(ref);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(ref) || r.startsWith('/')) return r;
  const path = framePath(filePath);
  const dir = path.slice(0, path.lastIndexOf('/') + 1);
  const out: string[] = [];
  for (const s of (dir + r).split('/')) {
    if (s === '..') out.pop();
    else if (s !== '.') out.push(s);
  }
  return out.join('/');
}

/** An original source path as people read it: bundler namespaces and leading ./ dropped. */
export function readableSource(source: string): string {
  return source
    .replace(/^webpack:\/\/[^/]*\//, '')
    .replace(/^(?:webpack-internal|turbopack|rollup|vite):\/\/\/?/, '')
    .replace(/^(?:\.\.?\/)+/, '')
    .replace(/^\/\.\//, '');
}
