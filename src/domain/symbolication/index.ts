import type { TraceMap } from '@jridgewell/trace-mapping';
import { symbolicateJs } from './sourceMaps.ts';
import { retraceStack, type ProguardMapping } from './retrace.ts';

/**
 * A stack as its release's artifacts read it. `unreadable`: the release's artifacts this stack
 * needed that could not be parsed (a bad map or mapping); the frames they would have mapped stay
 * raw, and the crash page says so.
 */
export interface SymbolicatedStack {
  stack: string;
  message: string;
  mapped: number;
  unreadable?: string[];
}

/** What a release uploaded, parsed: source maps by frame path, and its R8/ProGuard mapping. */
export interface ReleaseSymbols {
  jsMapFor?: (path: string) => TraceMap | null;
  proguard?: ProguardMapping | null;
}

/**
 * A stack (and the report's message, which a JVM report begins with the obfuscated exception
 * class) as the release's artifacts read it; `mapped` counts the lines that changed, 0 when
 * there was nothing to map (the raw stack is then the symbolicated one).
 */
export function symbolicate(stack: string, message: string, s: ReleaseSymbols): SymbolicatedStack {
  let mapped = 0;
  let out = stack;
  let msg = message;
  if (s.proguard) {
    const r = retraceStack(s.proguard, out);
    out = r.stack;
    mapped += r.mapped;
    msg =
      retraceStack(s.proguard, message.split('\n')[0] ?? '').stack +
      message.slice((message.split('\n')[0] ?? '').length);
  }
  if (s.jsMapFor) {
    const r = symbolicateJs(out, s.jsMapFor);
    out = r.stack;
    mapped += r.mapped;
  }
  return { stack: out, message: msg, mapped };
}

export {
  jsFilesOf,
  mapNameFor,
  minifiedNameFor,
  parseSourceMap,
  readSourceMap,
  SourceMapTooLargeError,
  type ArtifactRef,
} from './sourceMaps.ts';
export { SourceMapShapeError } from './sourceMapSize.ts';
export { parseProguardMapping, type ProguardMapping } from './retrace.ts';
export { sourceMappingUrl } from './jsFrames.ts';
