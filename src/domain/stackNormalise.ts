/**
 * The stack as the service groups it (docs/decisions.md, "Crash grouping on the normalised
 * stack"): volatile text that changes between two reports of one bug is replaced by a
 * placeholder, what tells two bugs apart stays. Message lines (the first line when it is not a
 * frame, `Caused by:` and .NET `--->` lines) lose numbers, UUIDs, hex runs and URL query
 * strings; frames lose content hashes in bundle file names, memory addresses, `+ offset` after
 * a symbol, URL query strings (removed) and per-install path parts (Android's random install
 * directory, a UUID path segment such as an iOS container's, a user's home directory). Line and
 * column numbers of frames stay: two throw sites are two bugs. Pure text in, text out.
 */

export const PLACEHOLDER = {
  number: '<n>',
  uuid: '<uuid>',
  hex: '<hex>',
  address: '<addr>',
  offset: '<offset>',
} as const;

/** Lines as the group key reads them: split on \n, a trailing \r dropped. */
export function stackLines(stack: string): string[] {
  return stack.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const HEX_PREFIXED = /\b0x[0-9a-f]+\b/gi;
// A run of hex digits with at least one digit and one letter (object hashes, ids, digests): a
// plain word ("deadline") or a plain number is not one.
const HEX_RUN = /(?<![\w$])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}(?![\w$])/gi;
// Standalone numbers (not digits inside an identifier such as Http2Error or utf8).
const NUMBER = /(?<![\w$.])-?\d+(?:[.,]\d+)*(?![\w$])/g;

// A URL's query string or fragment inside a message ("Client request(GET https://…/orders?token=…)").
const URL_QUERY = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s?#()]+)[?#][^\s()]*/gi;

/** A message line: the exception type and text stay, the values in it go (URL query strings too). */
export function normaliseMessage(line: string): string {
  return line
    .replace(URL_QUERY, '$1')
    .replace(UUID, PLACEHOLDER.uuid)
    .replace(HEX_PREFIXED, PLACEHOLDER.hex)
    .replace(HEX_RUN, PLACEHOLDER.hex)
    .replace(NUMBER, PLACEHOLDER.number);
}

/**
 * Frames as the common runtimes print them. V8/Node/Hermes `at fn (url:1:2)` / `at url:1:2`;
 * Firefox/Safari `fn@url:1:2`; JVM `at a.b.c(File.java:12)`; .NET `at N.C.M() in f.cs:line 3`;
 * Apple `0  MyApp  0x00000001 main + 120`; Android native `#00 pc 0004c3f4  /lib.so (fn+12)`;
 * React Native's `fn@123:456` (Hermes bytecode offsets) and Dart's `#0  fn (package:x/y.dart:1:2)`.
 */
const FRAME_PATTERNS: RegExp[] = [
  /^\s*at\s+\S/, // V8, Node, Hermes, JVM, .NET
  /^\s*(?:(?:global|eval|module) code|[^\s@]*)@\S*:\d+(?::\d+)?\s*$/, // Firefox/Safari/JavaScriptCore, RN
  /^\s*[^\s@]*@(?:\[native code\]|\S+)\s*$/, // Safari natives, bare URLs
  /^\s*\d+\s+\S+\s+0x[0-9a-f]+\s/i, // Apple crash report / backtrace
  /^\s*#\d+\s+(?:pc\s|0x|\S+\s*\()/i, // Android tombstone, Dart, gdb
  /^\s*\.\.\.\s*\d+\s+more\s*$/i, // JVM "... 12 more"
  /^\s*---\s*End of (?:inner exception )?stack trace/i, // .NET
];

export const isFrame = (line: string) => FRAME_PATTERNS.some((p) => p.test(line));

const isMessageLine = (line: string, index: number) =>
  /^\s*(?:Caused by:|Suppressed:|--->)/.test(line) || (index === 0 && !isFrame(line));

// A content hash joined to a bundle's base name by - . or _: hex of 6+ with a digit (webpack,
// esbuild, Metro, Next.js), or Vite/Rollup's 8-character base64url with a digit or mixed case.
const BUNDLE_HASH =
  /(?<=[\w)])([-._])((?=[0-9a-f]*\d)[0-9a-f]{6,}|(?=[\w-]*\d|[\w-]*[a-z][\w-]*[A-Z]|[\w-]*[A-Z][\w-]*[a-z])[A-Za-z0-9_-]{8})(?=(?:\.[a-z0-9]+)*\.(?:m?js|cjs|jsx?|tsx?|bundle|hbc|css|wasm)\b)/g;
// A query string or fragment of a URL (dropped), up to the frame's :line:col, a closing paren or a space.
const QUERY = /(?<=\.[A-Za-z0-9]+|\/)[?#][^\s()]*?(?=(?::\d+){1,2}(?=[)\s]|$)|[)\s]|$)/g;
// Per-install paths: Android's random install dirs, a home directory's owner.
const ANDROID_INSTALL = /\/data\/app\/(?:~~[A-Za-z0-9_=-]+\/)?([\w.]+)-[A-Za-z0-9_=-]+\//g;
// A UUID as a path segment (an iOS app container, a per-install cache directory); a UUID
// elsewhere in a frame (a generated function name) is part of what the frame is.
const PATH_UUID = /(?<=[/\\])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?=[/\\])/gi;
const HOME = /(\/Users\/|\/home\/|[A-Za-z]:[\\/]+Users[\\/]+)[^\\/\s:)]+/g;
// Apple: an address then a load address + offset (unsymbolicated: the offset into the image is
// what tells two sites apart and does not move between launches) or a symbol + offset.
const PLUS_OFFSET = /(?<=^|\s)([^\s+]+)(\s*\+\s*)(0x[0-9a-f]+|\d+)\b/gi;
const APPLE_FRAME = /^\s*\d+\s+\S+\s+0x[0-9a-f]+\s/i;
const PAREN_SYMBOL_OFFSET = /\(([^()\s+]+)\+(?:0x[0-9a-f]+|\d+)\)/gi;

/** A frame: where it is stays (function, file, line, column), what differs per build or launch goes. */
export function normaliseFrame(line: string): string {
  // White space stays as sent (so a stack with nothing volatile keeps the key it had before this
  // rule), except in Apple frames, whose columns are padded to the longest image name of the report.
  let s = APPLE_FRAME.test(line) ? line.trim().replace(/\s+/g, ' ') : line;
  s = s.replace(QUERY, ''); // present or not (a cache-buster added later), the same frame
  s = s.replace(ANDROID_INSTALL, '/data/app/$1-*/');
  s = s.replace(HOME, '$1~');
  s = s.replace(PATH_UUID, PLACEHOLDER.uuid);
  s = s.replace(BUNDLE_HASH, '$1*');
  s = s.replace(PAREN_SYMBOL_OFFSET, `($1+${PLACEHOLDER.offset})`);
  s = s.replace(PLUS_OFFSET, (_m, base: string, plus: string, offset: string) =>
    (/^0x[0-9a-f]+$/i.test(base) ? `${PLACEHOLDER.address}${plus}${offset}` : `${base}${plus}${PLACEHOLDER.offset}`));
  s = s.replace(/\b0x[0-9a-f]{4,}\b/gi, PLACEHOLDER.address);
  return s;
}

/** Every line of the stack, normalised (the group key hashes the first five). */
export function normaliseStack(stack: string): string[] {
  return stackLines(stack).map((l, i) => (isMessageLine(l, i) ? normaliseMessage(l) : normaliseFrame(l)));
}
