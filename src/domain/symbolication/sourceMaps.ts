import { FlattenMap, LEAST_UPPER_BOUND, originalPositionFor, type TraceMap } from '@jridgewell/trace-mapping';
import { jsonParseBytes, sourceMapSize, type SourceMapSize } from './sourceMapSize.ts';
import {
  IMPLICIT_BUNDLE,
  bestMatch,
  framePath,
  parseJsFrame,
  printJsFrame,
  readableSource,
  resolveBeside,
  type JsFrame,
} from './jsFrames.ts';

/**
 * JavaScript symbolication with uploaded source maps (browser bundles, Node, Electron, React
 * Native/Hermes). Pure: the caller fetches the artifacts a stack needs (jsFilesOf, mapNameFor)
 * and passes the parsed maps in.
 */

/** A map whose decoded form would pass the caller's bound; nothing of it was decoded. */
export class SourceMapTooLargeError extends Error {
  constructor(readonly size: Pick<SourceMapSize, 'bytes'> & Partial<SourceMapSize>) {
    super(
      `decodes to about ${Math.ceil(size.bytes / 1048576)} MiB` +
        (size.lines === undefined
          ? ' of JSON values'
          : ` (${size.lines} lines, ${size.segments} segments, ${size.sections} sections, ${size.names} names)`),
    );
  }
}

/**
 * A source map as uploaded (plain or indexed/sectioned, as Metro writes for RAM bundles), with
 * the memory its decoded form takes (sourceMapSize). A map over `maxBytes` is refused before
 * it is parsed (by its JSON's shape) or decoded (by its mappings' separators).
 */
export function readSourceMap(text: Buffer | string, maxBytes = Infinity): { map: TraceMap; size: SourceMapSize } {
  const buf = typeof text === 'string' ? Buffer.from(text) : text;
  const parseBytes = jsonParseBytes(buf);
  if (parseBytes > maxBytes) throw new SourceMapTooLargeError({ bytes: parseBytes });
  const raw = JSON.parse(typeof text === 'string' ? text : text.toString('utf8')) as unknown;
  if (typeof raw !== 'object' || raw === null || (raw as { version?: unknown }).version !== 3) {
    throw new Error('not a version 3 source map');
  }
  const size = sourceMapSize(raw as Record<string, unknown>, parseBytes);
  if (size.bytes > maxBytes) throw new SourceMapTooLargeError(size);
  return { map: new FlattenMap(raw as ConstructorParameters<typeof FlattenMap>[0]), size };
}

/** A source map as uploaded, unbounded (the caller trusts its size). */
export function parseSourceMap(json: string): TraceMap {
  return readSourceMap(json).map;
}

/** The paths of the JavaScript files a stack's frames are in, each once. */
export function jsFilesOf(stack: string): string[] {
  const out = new Set<string>();
  for (const l of stack.split('\n')) {
    const f = parseJsFrame(l.replace(/\r$/, ''));
    if (f && f.file !== 'native' && !f.file.startsWith('node:'))
      out.add(f.implicitFile ? IMPLICIT_BUNDLE : framePath(f.file));
  }
  return [...out];
}

export interface ArtifactRef {
  name: string;
  kind: 'sourcemap' | 'minified' | 'proguard';
}

/**
 * The source map artifact for a frame's file: the one its minified source's
 * `sourceMappingURL` names, when the minified source was uploaded (and the caller read the
 * reference from it); else one named as the file plus `.map` (by path suffix, `~/` prefix or
 * base name); else null.
 */
export function mapNameFor(
  path: string,
  artifacts: readonly ArtifactRef[],
  mappingUrlOf?: (minifiedName: string) => string | null,
): string | null {
  const maps = artifacts.filter((a) => a.kind === 'sourcemap').map((a) => a.name);
  if (path === IMPLICIT_BUNDLE) {
    // a Hermes frame naming no file is in the app's bundle: its map, or the release's only map
    return (
      maps.find((n) => /\.(?:js)?bundle\.map$|\.hbc\.map$/i.test(n)) ?? (maps.length === 1 ? (maps[0] ?? null) : null)
    );
  }
  if (mappingUrlOf) {
    const minified = bestMatch(
      artifacts.filter((a) => a.kind === 'minified').map((a) => a.name),
      path,
    );
    const ref = minified ? mappingUrlOf(minified) : null;
    if (minified && ref) {
      const named = bestMatch(maps, resolveBeside(path, ref));
      if (named) return named;
    }
  }
  return bestMatch(maps, `${path}.map`);
}

/** The minified source artifact of a frame's file, whose sourceMappingURL names its map. */
export function minifiedNameFor(path: string, artifacts: readonly ArtifactRef[]): string | null {
  return bestMatch(
    artifacts.filter((a) => a.kind === 'minified').map((a) => a.name),
    path,
  );
}

interface Mapped {
  frame: JsFrame;
  callee: string | null;
  renames: boolean;
}

/**
 * Each frame whose file has a map is rewritten to its original file, line, column and function.
 * A minified frame's own function name is not in the map at its position (that position is a
 * call inside it); the original name is the one written at its caller's call site, i.e. the
 * `name` mapped at the next frame's position (Sentry's rule). A mapped frame is never named by
 * its minified name: one whose caller's call site names nothing (the outermost frame, a call
 * through a variable) loses its function and is read by its original file and line, the same
 * in every build (a map with no names at all, from a build that renamed nothing, keeps the
 * frame's own). Lines that are not frames, or have no map, stay as they are.
 */
export function symbolicateJs(
  stack: string,
  mapFor: (path: string) => TraceMap | null,
): { stack: string; mapped: number } {
  const lines = stack.split('\n');
  const out: (Mapped | null)[] = lines.map((raw) => {
    const f = parseJsFrame(raw.replace(/\r$/, ''));
    if (!f) return null;
    const map = mapFor(f.implicitFile ? IMPLICIT_BUNDLE : framePath(f.file));
    if (!map) return null;
    const needle = { line: f.line, column: Math.max(0, (f.column ?? 1) - 1) };
    let pos = originalPositionFor(map, needle);
    if (pos.source === null) pos = originalPositionFor(map, { ...needle, bias: LEAST_UPPER_BOUND });
    if (pos.source === null || pos.line === null) return null;
    return {
      frame: {
        ...f,
        file: readableSource(pos.source),
        line: pos.line,
        column: pos.column === null ? null : pos.column + 1,
      },
      callee: pos.name,
      // A map without names comes from a build that renamed nothing (tsc, Babel): the frame's own name is the original.
      renames: map.names.length > 0,
    };
  });
  let mapped = 0;
  const result = lines.map((raw, i) => {
    const m = out[i];
    if (!m) return raw;
    mapped++;
    // The caller is the next frame line (lines between frames, such as "Caused by", end a chain).
    const caller = out[i + 1];
    const name = caller?.callee ?? null;
    const fn = name ? keepPrefix(m.frame.fn, name) : m.renames ? null : m.frame.fn;
    return printJsFrame({ ...m.frame, fn });
  });
  return { stack: result.join('\n'), mapped };
}

/** "async a" → "async loadOrder", "new a" → "new Order", "Object.a" → "loadOrder". */
function keepPrefix(minified: string | null, original: string): string {
  const p = /^(async |new )/.exec(minified ?? '');
  return `${p?.[1] ?? ''}${original}`;
}
