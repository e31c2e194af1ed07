import { jsonShape } from '../../lib/jsonScan.ts';

/**
 * What a source map costs in memory once decoded, read off its text without decoding it: a
 * 15 KB gzip of `";"×15e6 + "AAAA"` is a valid map whose decoded form is fifteen million line
 * arrays (0.8 GB). The upload refuses a map whose estimate passes a bound, and the parsed-map
 * cache charges each map by the same estimate (test/crashes/sourcemap-bounds.test.ts checks it against
 * the heap a decoded map really takes).
 *
 * Everything here reads each character of the text at most a fixed number of times.
 */

/** Sections inside sections (Metro writes one level; the format allows none). */
export const MAX_SECTION_DEPTH = 4;

// Bytes on a 64-bit V8 heap, measured (test/crashes/sourcemap-bounds.test.ts) and rounded up.
const BASE_BYTES = 4096; // the map object and its fixed bookkeeping
const LINE_BYTES = 64; // an array per generated line, and its slot in the array of lines
const SEGMENT_BYTES = 120; // an array of up to five numbers per segment, and its slot in its line
const ENTRY_BYTES = 96; // a slot per source and name, their strings' headers, a resolved source's own string
const SECTION_BYTES = 2048; // a map object per section while the sections are flattened
const CONTAINER_BYTES = 64; // an object or array of the JSON itself, while it is parsed
const VALUE_BYTES = 16; // a slot per value of the JSON itself

export interface SourceMapSize {
  /** generated lines, counting the empty ones a section's offset skips */
  lines: number;
  segments: number;
  sections: number;
  names: number;
  sources: number;
  /** the estimate, in bytes, of the parsed and decoded map */
  bytes: number;
}

export class SourceMapShapeError extends Error {}

/** Lines and segments of a `mappings` string, counted by its separators. */
function countMappings(m: string): { lines: number; segments: number } {
  let lines = 1;
  let segments = 0;
  let inSegment = false;
  for (let i = 0; i < m.length; i++) {
    const c = m.charCodeAt(i);
    if (c === 0x3b /* ; */ || c === 0x2c /* , */) {
      if (inSegment) segments++;
      inSegment = false;
      if (c === 0x3b) lines++;
    } else {
      inSegment = true;
    }
  }
  if (inSegment) segments++;
  return { lines, segments };
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

interface Tally {
  lastLine: number;
  segments: number;
  sections: number;
  names: number;
  sources: number;
  resolvedBytes: number;
}

function tallyMap(map: Record<string, unknown>, lineOffset: number, depth: number, t: Tally, where: string): void {
  if (Array.isArray(map.sections)) {
    if (depth >= MAX_SECTION_DEPTH)
      throw new SourceMapShapeError(`sections nest deeper than ${MAX_SECTION_DEPTH} levels`);
    for (const [i, s] of (map.sections as unknown[]).entries()) {
      const at = `${where}sections[${i}]`;
      const sec = s as { offset?: { line?: unknown; column?: unknown }; map?: unknown } | null;
      if (typeof sec !== 'object' || sec === null || typeof sec.offset !== 'object' || sec.offset === null) {
        throw new SourceMapShapeError(`${at} has no offset`);
      }
      if (!isCount(sec.offset.line) || !isCount(sec.offset.column)) {
        throw new SourceMapShapeError(`${at}.offset must have whole, non-negative line and column`);
      }
      // a map given as JSON text inside the JSON would escape the container count of the upload
      if (typeof sec.map !== 'object' || sec.map === null || Array.isArray(sec.map)) {
        throw new SourceMapShapeError(`${at}.map must be a source map object`);
      }
      t.sections++;
      tallyMap(sec.map as Record<string, unknown>, lineOffset + sec.offset.line, depth + 1, t, `${at}.map.`);
    }
    return;
  }
  if (typeof map.mappings !== 'string') throw new SourceMapShapeError(`${where}mappings must be a string`);
  const { lines, segments } = countMappings(map.mappings);
  t.lastLine = Math.max(t.lastLine, lineOffset + lines);
  t.segments += segments;
  const sources = Array.isArray(map.sources) ? map.sources.length : 0;
  const root = typeof map.sourceRoot === 'string' ? map.sourceRoot.length : 0;
  t.sources += sources;
  // each source is resolved against the root into a string of its own
  let named = 0;
  for (let i = 0; i < sources; i++) {
    const s = (map.sources as unknown[])[i];
    if (typeof s === 'string') named += s.length;
  }
  t.resolvedBytes += sources * root + named;
  t.names += Array.isArray(map.names) ? map.names.length : 0;
}

/**
 * The decoded size of a parsed source map (`raw`, whose text costs `parseBytes` to parse), or a SourceMapShapeError when
 * its sections or mappings are not of the shape the format allows.
 */
export function sourceMapSize(raw: Record<string, unknown>, parseBytes: number): SourceMapSize {
  const t: Tally = { lastLine: 0, segments: 0, sections: 0, names: 0, sources: 0, resolvedBytes: 0 };
  tallyMap(raw, 0, 0, t, '');
  const bytes =
    BASE_BYTES +
    parseBytes +
    t.lastLine * LINE_BYTES +
    t.segments * SEGMENT_BYTES +
    t.sections * SECTION_BYTES +
    (t.sources * 2 + t.names) * ENTRY_BYTES +
    t.resolvedBytes;
  return { lines: t.lastLine, segments: t.segments, sections: t.sections, names: t.names, sources: t.sources, bytes };
}

/**
 * What parsing JSON text alone would allocate beyond its strings: checked before JSON.parse, so
 * `[[],[],…]` is refused before it is parsed.
 */
export function jsonParseBytes(buf: Uint8Array): number {
  const shape = jsonShape(buf);
  return buf.length + shape.containers * CONTAINER_BYTES + shape.values * VALUE_BYTES;
}
