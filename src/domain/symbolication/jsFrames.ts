/**
 * JavaScript stack frames as V8 (Chrome, Node, Electron), Hermes (React Native), SpiderMonkey
 * (Firefox) and JavaScriptCore (Safari) print them: parsed into function, file, line and column,
 * and printed back in the same syntax once symbolicated.
 */
import { MAX_LINE_CHARS } from '../stackNormalise.ts';

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

// V8 / Hermes: "at fn (file:1:2)", "at async fn (file:1:2)", "at file:1:2",
// "at fn (address at file:1:2)" (Hermes bytecode).
const V8 = /^(\s*)at (?:(.+?) \()?(?:address at )?(.+?):(\d+)(?::(\d+))?\)?\s*$/;
// Firefox / Safari: "fn@file:1:2", "@file:1:2", Safari's "global code@file:1:2".
const GECKO = /^(\s*)((?:global|eval|module) code|[^@\s]*)@(.+?):(\d+)(?::(\d+))?\s*$/;

// Hermes without a source URL: "fn@1:557290" (line 1 of the bundle, column = bytecode offset).
const HERMES_BARE = /^(\s*)([^@\s]*)@(\d+):(\d+)\s*$/;

// JavaScriptCore's anonymous frame: a bare URL or path with its line and column.
// The path is taken up to the first `:line(:column)` that ends the line (each colon tried once).
const BARE = /^(\s*)((?:[a-z][a-z0-9+.-]{0,31}:\/\/|\/)\S+?):(\d+)(?::(\d+))?\s*$/i;
// React Native V8 (no `at`, no space): "onPress(index.android.bundle:1:2345)".
const RN_V8 = /^(\s*)([^\s()@]+)\(([^\s()]+):(\d+):(\d+)\)\s*$/;

export function parseJsFrame(line: string): JsFrame | null {
  // No frame is that long: a longer line is not read by any pattern (they would take its length squared).
  if (line.length > MAX_LINE_CHARS) return null;
  const hb = HERMES_BARE.exec(line);
  if (hb) return { style: 'gecko', indent: hb[1] ?? '', fn: hb[2] || null, file: IMPLICIT_BUNDLE, line: Number(hb[3]), column: Number(hb[4]), implicitFile: true };
  const v = V8.exec(line);
  if (v) {
    return { style: 'v8', indent: v[1] ?? '', fn: v[2] ?? null, file: v[3]!, line: Number(v[4]), column: v[5] === undefined ? null : Number(v[5]) };
  }
  const g = GECKO.exec(line);
  if (g) return { style: 'gecko', indent: g[1] ?? '', fn: g[2] || null, file: g[3]!, line: Number(g[4]), column: g[5] === undefined ? null : Number(g[5]) };
  const r = RN_V8.exec(line);
  if (r) return { style: 'rnv8', indent: r[1] ?? '', fn: r[2]!, file: r[3]!, line: Number(r[4]), column: Number(r[5]) };
  const b = BARE.exec(line);
  if (b) return { style: 'bare', indent: b[1] ?? '', fn: null, file: b[2]!, line: Number(b[3]), column: b[4] === undefined ? null : Number(b[4]) };
  return null;
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

const segments = (p: string) => p.replace(/^~\//, '').replace(/^\.\//, '').split('/').filter((s) => s !== '' && s !== '.');

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
  const dir = framePath(filePath).replace(/[^/]*$/, '');
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
