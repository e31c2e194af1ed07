import { LEAST_UPPER_BOUND, originalPositionFor, sourceContentFor, type TraceMap } from '@jridgewell/trace-mapping';
import { IMPLICIT_BUNDLE, framePath, parseJsFrame, readableSource } from './jsFrames.ts';

/**
 * Source lines around each mapped JavaScript frame, from its source map's `sourcesContent`
 * (the crash page's "Source" block). Pure; bounded: at most MAX_FRAMES frames, RADIUS lines each
 * side, each line cut at LINE_CHARS, and at most FRAME_BYTES per frame. A source is scanned only
 * up to the lines it needs, so a huge bundled source costs one pass to that line.
 */
export const SOURCE_LIMITS = { maxFrames: 10, radius: 5, lineChars: 240, frameBytes: 4096 } as const;

export interface SourceLine {
  line: number;
  text: string;
}

export interface FrameSource {
  /** the frame's line index in the stack as sent */
  index: number;
  /** the original file, line and column */
  file: string;
  line: number;
  column: number | null;
  /** not from a dependency (node_modules, a bundler's runtime) */
  inApp: boolean;
  lines: SourceLine[];
}

const LIBRARY =
  /(?:^|\/)(?:node_modules|bower_components|jspm_packages)\/|^webpack\/(?:bootstrap|runtime)|^\(webpack\)/;

/** The lines [from, to] (1-based) of a text, without splitting all of it. */
function linesOf(content: string, from: number, to: number): SourceLine[] {
  const out: SourceLine[] = [];
  let start = 0;
  for (let n = 1; n <= to; n++) {
    const end = content.indexOf('\n', start);
    const stop = end === -1 ? content.length : end;
    if (n >= from) {
      let t = content.slice(start, Math.min(stop, start + SOURCE_LIMITS.lineChars + 1)).replace(/\r$/, '');
      if (t.length > SOURCE_LIMITS.lineChars) t = `${t.slice(0, SOURCE_LIMITS.lineChars)}…`;
      out.push({ line: n, text: t });
    }
    if (end === -1) break;
    start = end + 1;
  }
  return out;
}

/** Within FRAME_BYTES, keeping the frame's own line and as many around it as fit. */
function bounded(lines: SourceLine[], at: number): SourceLine[] {
  const own = lines.findIndex((l) => l.line === at);
  const ownLine = lines[own];
  if (ownLine === undefined) return [];
  let lo = own;
  let hi = own;
  let bytes = Buffer.byteLength(ownLine.text);
  for (let grew = true; grew; ) {
    grew = false;
    for (const i of [hi + 1, lo - 1]) {
      const l = lines[i];
      if (!l) continue;
      const b = Buffer.byteLength(l.text);
      if (bytes + b > SOURCE_LIMITS.frameBytes) continue;
      bytes += b;
      if (i > hi) hi = i;
      else lo = i;
      grew = true;
    }
  }
  return lines.slice(lo, hi + 1);
}

export function sourceContext(stack: string, mapFor: (path: string) => TraceMap | null): FrameSource[] {
  const out: FrameSource[] = [];
  const lines = stack.split('\n');
  for (let i = 0; i < lines.length && out.length < SOURCE_LIMITS.maxFrames; i++) {
    // a frame line is cut before any pattern runs (linear time on hostile stacks)
    const f = parseJsFrame((lines[i] ?? '').slice(0, 1024).replace(/\r$/, ''));
    if (!f) continue;
    const map = mapFor(f.implicitFile ? IMPLICIT_BUNDLE : framePath(f.file));
    if (!map) continue;
    const needle = { line: f.line, column: Math.max(0, (f.column ?? 1) - 1) };
    let pos = originalPositionFor(map, needle);
    if (pos.source === null) pos = originalPositionFor(map, { ...needle, bias: LEAST_UPPER_BOUND });
    if (pos.source === null || pos.line === null) continue;
    const content = sourceContentFor(map, pos.source);
    const file = readableSource(pos.source);
    const from = Math.max(1, pos.line - SOURCE_LIMITS.radius);
    const around = content ? bounded(linesOf(content, from, pos.line + SOURCE_LIMITS.radius), pos.line) : [];

    out.push({
      index: i,
      file,
      line: pos.line,
      column: pos.column === null ? null : pos.column + 1,
      inApp: !LIBRARY.test(file),
      lines: around,
    });
  }
  return out;
}
