/**
 * The stack as the service groups it (docs/decisions.md, "Crash grouping on the normalised
 * stack"): volatile text that changes between two reports of one bug is replaced by a
 * placeholder, what tells two bugs apart stays. Message lines (the first line when it is not a
 * frame, `Caused by:` and .NET `--->` lines) lose numbers (but an HTTP status right after `HTTP`,
 * `status` or `code`), UUIDs, hex runs, URL query strings and the build ids and content hashes of
 * script URLs; frames lose content hashes in bundle file names, Next.js build ids, memory
 * addresses, `+ offset` after a symbol, a symbolised tombstone frame's pc, ELF BuildIds, URL query
 * strings (removed) and per-install path parts (Android's random install directory, a UUID path
 * segment such as an iOS container's, a user's home directory). Line and column numbers of frames
 * stay: two throw sites are two bugs. Pure text in, text out.
 */

export const PLACEHOLDER = {
  number: '<n>',
  uuid: '<uuid>',
  hex: '<hex>',
  address: '<addr>',
  offset: '<offset>',
} as const;

/**
 * A line is read to this many characters before any pattern runs on it: the time every pattern
 * takes is then bounded whatever a client sends (a frame is never this long; a longer message
 * line is one group by its first KiB).
 */
export const MAX_LINE_CHARS = 1024;

const cutLine = (l: string) => (l.length > MAX_LINE_CHARS ? l.slice(0, MAX_LINE_CHARS) : l);

/** Lines as the group key reads them: split on \n, a trailing \r dropped, each cut at MAX_LINE_CHARS. */
export function stackLines(stack: string): string[] {
  return stack.split('\n').map((l) => {
    return cutLine(l.endsWith('\r') ? l.slice(0, -1) : l);
  });
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const HEX_PREFIXED = /\b0x[0-9a-f]+\b/gi;
// A run of hex digits with at least one digit and one letter (object hashes, ids, digests): a
// plain word ("deadline") or a plain number is not one.
const HEX_RUN = /(?<![\w$])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}(?![\w$])/gi;
// Standalone numbers (not digits inside an identifier such as Http2Error or utf8).
const NUMBER = /(?<![\w$.])-?\d+(?:[.,]\d+)*(?![\w$])/g;

// An HTTP status right after the word that names it ("HTTP 404", "HTTP/1.1 502", "status 502",
// "status code 404", "statusCode: 500", "code=503"): a kind of failure, not an id, so it stays.
// Only 100-599 and only directly after such a word; any other number ("Order 1042") is volatile.
const STATUS_WORD_BEFORE = /(?:\bHTTP(?:\/\d(?:\.\d)?)?|\bstatus(?:[ _]?code)?|\bcode)["']?\s*[:=]?\s*$/i;
const HTTP_STATUS = /^[1-5]\d\d$/;
// The word is read in the few characters before the number, not in the whole line before it.
const STATUS_WORD_REACH = 32;

// A URL's query string or fragment inside a message ("Client request(GET https://…/orders?token=…)").
// The scheme is bounded and the part before the query is taken whole (a lookahead and its
// back-reference: an atomic group), so a line of many `://` or dots is read in linear time.
const URL_QUERY = /(\b[a-z][a-z0-9+.-]{0,31}:\/\/(?=([^\s?#()]+))\2)[?#][^\s()]*/gi;

// A quoted value in a message ('total', "<!DOCTYPE …", `id`): an opening quote not inside a word
// (an apostrophe is not one) up to the next one, read once.
// V8 cuts a long quoted value with "...", which goes with it.
const QUOTED = /(?<![\w'"`])(['"`])[^'"`\n]{0,256}\1(?:\.\.\.)?/g;
export const QUOTED_PLACEHOLDER = '<s>';

/**
 * A message line: the exception type and text stay, the values in it go (URL query strings too).
 * `quoted`: quoted values go too (the frame-based group key; the previous rule kept them).
 */
export function normaliseMessage(text: string, opts: { quoted?: boolean } = {}): string {
  // Cut here, not only by the callers: a caller that forgets must not hand a pattern 256 KB.
  const line = cutLine(text);
  const out = line
    .replace(URL_QUERY, '$1')
    .replace(UUID, PLACEHOLDER.uuid)
    // A script's URL in a message ("Failed to fetch dynamically imported module: …/Page-B_2kZ-9x.js"):
    // its build id and content hash read <hex>, as HEX_RUN reads a hex hash, so a build whose hash
    // happens to be all hex reads as the others (and no key of a hex hash moves). Before the hex
    // and number rules, which would take a `0x…`, hex or digit run out of a base64 hash.
    .replace(NEXT_BUILD_ID, PLACEHOLDER.hex)
    .replace(BUNDLE_HASH, `$1${PLACEHOLDER.hex}`)
    .replace(HEX_PREFIXED, PLACEHOLDER.hex)
    .replace(HEX_RUN, PLACEHOLDER.hex)
    .replace(NUMBER, (n: string, at: number, whole: string) =>
      HTTP_STATUS.test(n) && STATUS_WORD_BEFORE.test(whole.slice(Math.max(0, at - STATUS_WORD_REACH), at))
        ? n
        : PLACEHOLDER.number,
    );
  // Last: a status named by a quoted key ({"statusCode":502}) is read before its key goes.
  return opts.quoted ? out.replace(QUOTED, `$1${QUOTED_PLACEHOLDER}$1`) : out;
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
// Parcel, Metro, Next.js, CRA's `main.3f2a1b9c.chunk.js`), Vite/Rollup's 8-character base64url
// with a digit or mixed case, or esbuild's 8 capitals (base32: `chunk-ABCDEFGH.js` is one build in
// five). Turbopack puts `._` before the extension (`src_app_page_tsx_5d7a7a1c._.js`). The
// lookaheads are bounded to the 8-character token they test (unbounded, `a-a-a-…` took cubic time).
const BUNDLE_HASH =
  /(?<=[\w)])([-._])((?=[0-9a-f]*\d)[0-9a-f]{6,}|(?=[\w-]{0,7}\d|[\w-]{0,6}[a-z][\w-]{0,6}[A-Z]|[\w-]{0,6}[A-Z][\w-]{0,6}[a-z])[A-Za-z0-9_-]{8}|[A-Z]{8})(?=(?:\.[a-z0-9_]+)*\.(?:m?js|cjs|jsx?|tsx?|bundle|hbc|css|wasm)\b)/g;
// Next.js: the build id directory (`/_next/static/<buildId>/_buildManifest.js`, a new nanoid or a
// custom id per build) is every segment right under /_next/static/ but Next's own directories.
const NEXT_BUILD_ID = /(?<=\/_next\/static\/)(?!(?:chunks|css|media|webpack)\/)[^/\s()?#]+(?=\/)/g;
// Turbopack's production chunks are named by their hash alone (`/_next/static/chunks/8f3a2c1d9e0b7a6c.js`).
// Read from the one place a line names that directory, segment by segment (a lookbehind over the
// directories took quadratic time on a line of many `/`).
const NEXT_CHUNKS = '/_next/static/chunks/';
const NEXT_HASH_SEGMENT = /(?<=^|\/)(?=[\w-]*\d)[\w-]{8,}(?=\.m?js\b)/g;
function replaceNextHashNames(s: string): string {
  const at = s.indexOf(NEXT_CHUNKS);
  if (at < 0) return s;
  const from = at + NEXT_CHUNKS.length;
  const end = s.slice(from).search(/[\s()]/);
  const to = end < 0 ? s.length : from + end;
  return s.slice(0, from) + s.slice(from, to).replace(NEXT_HASH_SEGMENT, '*') + s.slice(to);
}
// A query string or fragment of a URL (dropped), up to the frame's :line:col, a closing paren or a space.
// What precedes it is captured and put back, not looked behind for (a lookbehind over a run of
// letters is read again at every position of the run).
const QUERY = /(\.[A-Za-z0-9]+|\/)[?#][^\s()]*?(?=(?::\d+){1,2}(?=[)\s]|$)|[)\s]|$)/g;
// Per-install paths: Android's random install dirs (internal storage, or an adopted SD card's
// /mnt/expand/<uuid>/app/), a home directory's owner.
const ANDROID_INSTALL = /(\/(?:data|mnt\/expand\/[^/\s]+)\/app\/)(?:~~[A-Za-z0-9_=-]+\/)?([\w.]+)-[A-Za-z0-9_=-]+\//g;
// A UUID as a path segment (an iOS app container, a per-install cache directory); a UUID
// elsewhere in a frame (a generated function name) is part of what the frame is.
const PATH_UUID = /(?<=[/\\])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?=[/\\])/gi;
const HOME = /(\/Users\/|\/home\/|[A-Za-z]:[\\/]+Users[\\/]+)[^\\/\s:)]+/g;
// Apple: an address then a load address + offset (unsymbolicated: the offset into the image is
// what tells two sites apart and does not move between launches) or a symbol + offset.
const PLUS_OFFSET = /(?<=^|\s)([^\s+]+)(\s*\+\s*)(0x[0-9a-f]+|\d+)\b/gi;
const APPLE_FRAME = /^\s*\d+\s+\S+\s+0x[0-9a-f]+\s/i;
const PAREN_SYMBOL_OFFSET = /\(([^()\s+]+)\+(?:0x[0-9a-f]+|\d+)\)/gi;
// Android tombstone: the pc is relative to the library, so it moves with every build of it (of the
// app's own library, and of libc with each OS update); when the frame names its symbol the pc is
// dropped, when it does not the pc is the only thing telling two sites apart and stays (as the
// offset after an Apple load address does). The library's BuildId changes with every build.
const TOMBSTONE_PC = /^(\s*#\d+\s+pc\s+)[0-9a-f]+(?=\s.*\+<offset>\))/i;
const BUILD_ID = /(\(BuildId:\s*)[0-9a-f]+(?=\))/gi;

/** A frame: where it is stays (function, file, line, column), what differs per build or launch goes. */
export function normaliseFrame(text: string): string {
  const line = cutLine(text);
  // White space stays as sent (so a stack with nothing volatile keeps the key it had before this
  // rule), except in Apple frames, whose columns are padded to the longest image name of the report.
  let s = APPLE_FRAME.test(line) ? line.trim().replace(/\s+/g, ' ') : line;
  s = s.replace(QUERY, '$1'); // present or not (a cache-buster added later), the same frame
  s = s.replace(ANDROID_INSTALL, '$1$2-*/');
  s = s.replace(HOME, '$1~');
  s = s.replace(PATH_UUID, PLACEHOLDER.uuid);
  s = s.replace(NEXT_BUILD_ID, '*');
  s = s.replace(BUNDLE_HASH, '$1*');
  s = replaceNextHashNames(s);
  s = s.replace(PAREN_SYMBOL_OFFSET, `($1+${PLACEHOLDER.offset})`);
  s = s.replace(PLUS_OFFSET, (_m, base: string, plus: string, offset: string) =>
    /^0x[0-9a-f]+$/i.test(base) ? `${PLACEHOLDER.address}${plus}${offset}` : `${base}${plus}${PLACEHOLDER.offset}`,
  );
  s = s.replace(TOMBSTONE_PC, `$1${PLACEHOLDER.address}`);
  s = s.replace(BUILD_ID, `$1${PLACEHOLDER.hex}`);
  s = s.replace(/\b0x[0-9a-f]{4,}\b/gi, PLACEHOLDER.address);
  return s;
}

/** Every line of the stack, normalised (the group key hashes the first five). */
export function normaliseStack(stack: string): string[] {
  return stackLines(stack).map((l, i) => (isMessageLine(l, i) ? normaliseMessage(l) : normaliseFrame(l)));
}
