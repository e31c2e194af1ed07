/**
 * Cheap looks at JSON text before it is parsed: a 5 KB gzip body can inflate to 5 MiB of
 * `{},{},…` whose JSON.parse alone holds the event loop for half a second, and whose schema
 * check then reports an error per element. These scans read the bytes once, allocate nothing,
 * and let the edge refuse such a body before parsing it (docs/reliability.md, Security).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJ = 0x7b;
const CLOSE_OBJ = 0x7d;
const OPEN_ARR = 0x5b;
const CLOSE_ARR = 0x5d;

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/** The first byte that is not JSON whitespace (a UTF-8 BOM skipped), or -1. */
export function firstByte(buf: Uint8Array): number {
  let i = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  while (i < buf.length && isSpace(buf[i] ?? 0)) i++;
  return buf[i] ?? -1;
}

/** Index of the quote that closes the string whose opening quote is at `open`; -1 if none. */
function stringEnd(buf: Uint8Array, open: number): number {
  let i = open;
  for (;;) {
    i = buf.indexOf(QUOTE, i + 1);
    if (i < 0) return -1;
    let slashes = 0;
    for (let j = i - 1; j > open && buf[j] === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return i;
  }
}

/**
 * Whether the array that is the value of `key` in the top-level object has more than `max`
 * elements (counted by its separating commas, so it stops reading at the first one too many).
 * Text that is not well-formed JSON answers false: the parser will say so.
 */
export function topLevelArrayExceeds(buf: Uint8Array, key: string, max: number): boolean {
  const want = Buffer.from(JSON.stringify(key));
  let depth = 0;
  let lastKeyStart = -1;
  let lastKeyEnd = -1;
  let inTarget = false;
  let commas = 0;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i] ?? 0; // i < buf.length: never the fallback
    if (b === QUOTE) {
      const end = stringEnd(buf, i);
      if (end < 0) return false;
      if (depth === 1) {
        lastKeyStart = i;
        lastKeyEnd = end + 1;
      }
      i = end;
    } else if (b === OPEN_OBJ || b === OPEN_ARR) {
      depth++;
      if (
        depth === 2 &&
        b === OPEN_ARR &&
        lastKeyStart >= 0 &&
        Buffer.compare(want, buf.subarray(lastKeyStart, lastKeyEnd)) === 0
      ) {
        inTarget = true;
        commas = 0;
      }
    } else if (b === CLOSE_OBJ || b === CLOSE_ARR) {
      if (depth === 2 && inTarget) inTarget = false;
      depth--;
      if (depth < 0) return false;
    } else if (b === COMMA) {
      if (depth === 2 && inTarget && ++commas >= max) return true;
      if (depth === 1) lastKeyStart = -1;
    }
  }
  return false;
}

/** An exponent of three or more digits (`1e400`, `1E+400`), wherever it falls: inside a string too. */
const BIG_EXPONENT = /[0-9][eE]\+?[0-9]{3}/g;
const COLON = 0x3a;
const DOT = 0x2e;
const MINUS = 0x2d;
/**
 * Digits in a row from which a number may be beyond a double's range (about 1.8e308): 309 on
 * their own, or fewer with an exponent of at most two digits (three are caught above), so
 * 309 − 99 = 210 (`999…9e1`, 308 nines, is Infinity).
 */
const HUGE_RUN = 210;

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/**
 * Whether the exponent whose first digit is at `at` can belong to a number token: one is always
 * preceded, past its digits, point, sign and any whitespace, by `:`, `,`, `[` or the start of the
 * text. A hex id such as a UUID (`…-4e123…`: one random UUID in nine) is not: taken for a number,
 * it had the whole parsed body walked, a path string per value, for most network batches.
 * Reads back only over the run before this candidate, so a text's candidates cost one pass.
 */
function exponentOfNumber(text: string, at: number): boolean {
  let i = at;
  while (i > 0 && (isDigit(text.charCodeAt(i - 1)) || text.charCodeAt(i - 1) === DOT)) i--;
  if (i > 0 && text.charCodeAt(i - 1) === MINUS) i--;
  while (i > 0 && isSpace(text.charCodeAt(i - 1))) i--;
  if (i === 0) return true;
  const c = text.charCodeAt(i - 1);
  return c === COLON || c === COMMA || c === OPEN_ARR;
}

/**
 * Whether JSON text may hold a number that parses to ±Infinity: an exponent of three or more
 * digits, or a run of 210 digits (a cheap test; the parsed value is walked only when it says
 * yes). A run that long covers one of every 210th character, so only those are looked at: a
 * regular expression for the run costs as much as JSON.parse itself on a 100-event body
 * (measured: 62 µs of 18 KB, against 7 µs for this).
 */
export function mayHoldHugeNumber(text: string): boolean {
  BIG_EXPONENT.lastIndex = 0;
  for (let m = BIG_EXPONENT.exec(text); m !== null; m = BIG_EXPONENT.exec(text)) {
    if (exponentOfNumber(text, m.index)) return true;
    BIG_EXPONENT.lastIndex = m.index + 1;
  }
  for (let i = HUGE_RUN - 1; i < text.length; i += HUGE_RUN) {
    if (!isDigit(text.charCodeAt(i))) continue;
    let from = i;
    let to = i;
    while (from > 0 && isDigit(text.charCodeAt(from - 1))) from--;
    while (to + 1 < text.length && isDigit(text.charCodeAt(to + 1))) to++;
    if (to - from + 1 >= HUGE_RUN) return true;
  }
  return false;
}

/** JSON pointers of every non-finite number in a parsed value (iterative: any depth is safe). */
export function nonFinitePaths(root: unknown, limit = 100): string[] {
  const out: string[] = [];
  const esc = (k: string) => k.replaceAll('~', '~0').replaceAll('/', '~1');
  const stack: [unknown, string][] = [[root, '']];
  for (let top = stack.pop(); top !== undefined && out.length < limit; top = stack.pop()) {
    const [v, path] = top;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) out.push(path || '/');
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}/${i}`]);
    } else if (v !== null && typeof v === 'object') {
      for (const k of Object.keys(v).reverse()) stack.push([(v as Record<string, unknown>)[k], `${path}/${esc(k)}`]);
    }
  }
  return out;
}

/**
 * How many containers (objects and arrays) and separated values JSON text holds, counted
 * outside strings in one pass: what JSON.parse would allocate beyond the strings themselves, so
 * a caller can refuse `[[],[],…]` before parsing multiplies its size in memory. Text that is
 * not well-formed JSON gives a count that is merely wrong; the parser will refuse it.
 */
export function jsonShape(buf: Uint8Array): { containers: number; values: number } {
  let containers = 0;
  let values = 0;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i] ?? 0; // i < buf.length: never the fallback
    if (b === QUOTE) {
      const end = stringEnd(buf, i);
      if (end < 0) break;
      i = end;
    } else if (b === OPEN_OBJ || b === OPEN_ARR) {
      containers++;
      values++;
    } else if (b === COMMA) {
      values++;
    }
  }
  return { containers, values };
}
