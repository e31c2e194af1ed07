/**
 * R8/ProGuard retrace in TypeScript: a `mapping.txt` parsed once, then Java/Kotlin stack frames
 * (`at c.a.b.a(SourceFile:12)`) and exception class names (`c.a.d: message`, `Caused by: …`)
 * mapped back to the original classes, methods, files and lines, inline frames expanded.
 *
 * The format (R8's, a superset of ProGuard's):
 *   com.shop.OrderRepository -> c.a.b:
 *   # {"id":"sourceFile","fileName":"OrderRepository.kt"}
 *       java.lang.String name -> a
 *       1:3:void load(long):57:59 -> a          (obfuscated lines 1-3 are original 57-59)
 *       4:4:void com.shop.Util.check(int):10:10 -> a   (inlined into the next line's method)
 *       4:4:void load(long):60 -> a
 *       void refresh() -> b                      (no line information)
 */
import { MAX_LINE_CHARS } from '../stackNormalise.ts';
import { present } from '../../lib/invariant.ts';

interface MemberMapping {
  /** obfuscated line range, or null when the line has no range */
  from: number | null;
  to: number | null;
  /** the original method's class when it was inlined from another class (qualified name) */
  className: string | null;
  method: string;
  origFrom: number | null;
  origTo: number | null;
}

interface ClassMapping {
  original: string;
  sourceFile: string | null;
  /** obfuscated method name → its mapping lines, in file order */
  methods: Map<string, MemberMapping[]>;
}

export interface ProguardMapping {
  /** obfuscated class name → mapping */
  classes: Map<string, ClassMapping>;
  /** original class name → its source file, for inlined frames from other classes */
  sourceFiles: Map<string, string>;
}

/**
 * Longer lines are skipped before any pattern runs: a real class or method line is a few hundred
 * characters, and bounded input keeps every pattern below linear in the file (issue 32).
 */
const MAX_MAPPING_LINE = 4096;

const CLASS_LINE = /^(\S+) -> (\S+):\s*$/;
// [from:to:]returnType [class.]name(args)[:origFrom[:origTo]] -> obfuscated
const METHOD_LINE = /^\s+(?:(\d+):(\d+):)?\S+ (?:([^\s(]+)\.)?([^\s.(]+)\([^)]*\)(?::(\d+)(?::(\d+))?)? -> (\S+)\s*$/;

/**
 * R8's `# {"id":"sourceFile","fileName":"Orders.kt"}`: the file name, or null when the line is
 * another comment. Read with JSON.parse after the `#`, not a pattern: `.*"id"….*\}` backtracks
 * quadratically on a long line of repeated `"id":"sourceFile"` without a closing brace.
 */
function sourceFileComment(line: string): string | null | undefined {
  const body = line.trim();
  if (!body.startsWith('#')) return undefined;
  const json = body.slice(1).trim();
  if (!json.startsWith('{') || !json.endsWith('}')) return null;
  try {
    const meta = JSON.parse(json) as { id?: unknown; fileName?: unknown };
    return meta.id === 'sourceFile' && typeof meta.fileName === 'string' ? meta.fileName : null;
  } catch {
    // a malformed metadata comment is ignored, as R8's retrace does
    return null;
  }
}

export function parseProguardMapping(text: string): ProguardMapping {
  const classes = new Map<string, ClassMapping>();
  const sourceFiles = new Map<string, string>();
  let current: ClassMapping | null = null;
  for (const raw of text.split('\n')) {
    if (raw.length > MAX_MAPPING_LINE) continue;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') continue;
    const fileName = sourceFileComment(line);
    if (fileName !== undefined) {
      if (fileName !== null && current) {
        current.sourceFile = fileName;
        sourceFiles.set(current.original, fileName);
      }
      continue;
    }
    const c = CLASS_LINE.exec(line);
    if (c) {
      current = { original: present(c[1], 'class mapping original name'), sourceFile: null, methods: new Map() };
      classes.set(present(c[2], 'class mapping obfuscated name'), current);
      continue;
    }
    const m = METHOD_LINE.exec(line);
    if (m && current) {
      const num = (s: string | undefined) => (s === undefined ? null : Number(s));
      const entry: MemberMapping = {
        from: num(m[1]),
        to: num(m[2]),
        className: m[3] ?? null,
        method: present(m[4], 'member mapping original name'),
        origFrom: num(m[5]),
        origTo: num(m[6]),
      };
      const obfuscated = present(m[7], 'member mapping obfuscated name');
      const list = current.methods.get(obfuscated) ?? [];
      list.push(entry);
      current.methods.set(obfuscated, list);
    }
    // field lines ("type name -> a") are not needed to read a stack
  }
  return { classes, sourceFiles };
}

export interface RetracedFrame {
  className: string;
  method: string;
  file: string;
  line: number | null;
}

const simpleName = (cls: string) => (cls.split('.').at(-1) ?? cls).split('$')[0] ?? cls;

/**
 * A frame's "file" that names no file: R8's default `SourceFile`, the VM's `Unknown Source`, and
 * R8's `r8-map-id-<hash>` (the mapping's id, new with every build).
 */
const isPlaceholderFile = (f: string) => f === 'SourceFile' || f === 'Unknown Source' || f.startsWith('r8-map-id-');

/** The source file of an original class: R8's metadata, else its outer class's name + .java. */
function fileOf(mapping: ProguardMapping, cls: string, given: string | null): string {
  const outer = cls.split('$')[0] ?? cls;
  const known = mapping.sourceFiles.get(cls) ?? mapping.sourceFiles.get(outer);
  if (known) return known;
  if (given && !isPlaceholderFile(given)) return given;
  return `${simpleName(cls)}.java`;
}

function originalLine(e: MemberMapping, line: number | null): number | null {
  if (line === null) return e.origFrom;
  if (e.origFrom === null) return line; // ProGuard without original lines: the lines were kept
  if (e.from === null) return e.origFrom;
  if (e.origTo === null || e.origTo === e.origFrom) return e.origFrom;
  return e.origFrom + (line - e.from);
}

/**
 * The original frames of one obfuscated frame: several when methods were inlined (innermost
 * first, as the JVM would have printed them), or null when the class is not in the mapping.
 */
export function retraceFrame(
  mapping: ProguardMapping,
  cls: string,
  method: string,
  file: string | null,
  line: number | null,
): RetracedFrame[] | null {
  const c = mapping.classes.get(cls);
  if (!c) return null;
  const entries = c.methods.get(method);
  if (!entries || entries.length === 0) {
    // the class is known, the method was not renamed (or not listed)
    return [{ className: c.original, method, file: fileOf(mapping, c.original, file), line }];
  }
  let hits =
    line === null ? [] : entries.filter((e) => e.from !== null && e.to !== null && line >= e.from && line <= e.to);
  if (hits.length === 0) hits = entries.filter((e) => e.from === null);
  if (hits.length === 0) hits = entries.filter((e) => e.from === 0 && e.to === 0);
  const first = hits[0];
  if (first === undefined) {
    // several methods share the obfuscated name and no range holds the line: R8 prints every
    // candidate; a stack line can hold one, so the first is shown
    hits = entries.slice(0, 1);
  } else if (line !== null && hits.some((h) => h.from !== null)) {
    // one inline chain is the run of entries with the exact same range as the first hit
    hits = hits.filter((h) => h.from === first.from && h.to === first.to);
  } else {
    hits = [first];
  }
  return hits.map((e) => {
    const owner = e.className ?? c.original;
    return { className: owner, method: e.method, file: fileOf(mapping, owner, file), line: originalLine(e, line) };
  });
}

/** A class name, deobfuscated when the mapping has it. */
export function originalClass(mapping: ProguardMapping, cls: string): string {
  return mapping.classes.get(cls)?.original ?? cls;
}

const JVM_FRAME = /^(\s*)at ((?:[\w$]+\.)*[\w$]+)\.([\w$<>-]+)\((?:([^:()]*)(?::(\d+))?)?\)\s*$/;
// "c.a.d: message", "Caused by: c.a.d: message", "Suppressed: c.a.d", or a bare "c.a.d"
const THROWABLE = /^(\s*(?:Caused by: |Suppressed: )?)((?:[\w$]+\.)+[\w$]+|[\w$]+)(:.*)?$/;

/** A whole stack retraced: frames expanded, exception class names deobfuscated; other lines as they were. */
export function retraceStack(mapping: ProguardMapping, stack: string): { stack: string; mapped: number } {
  let mapped = 0;
  const out: string[] = [];
  for (const [i, raw] of stack.split('\n').entries()) {
    const line = raw.replace(/\r$/, '');
    // A line longer than any frame is left as it is, unread: patterns see bounded text only.
    const f = line.length > MAX_LINE_CHARS ? null : JVM_FRAME.exec(line);
    const frames =
      f &&
      retraceFrame(
        mapping,
        present(f[2], 'JVM frame class group'),
        present(f[3], 'JVM frame method group'),
        f[4] ?? null,
        f[5] === undefined ? null : Number(f[5]),
      );
    if (f && frames) {
      mapped++;
      for (const r of frames)
        out.push(`${f[1]}at ${r.className}.${r.method}(${r.file}${r.line === null ? '' : `:${r.line}`})`);
      continue;
    }
    const t = f || line.length > MAX_LINE_CHARS ? null : THROWABLE.exec(line);
    const lead = t?.[1] ?? '';
    const cls = t?.[2];
    if (cls !== undefined && (i === 0 || lead.trim() !== '') && mapping.classes.has(cls)) {
      mapped++;
      out.push(`${lead}${originalClass(mapping, cls)}${t?.[3] ?? ''}`);
      continue;
    }
    out.push(raw);
  }
  return { stack: out.join('\n'), mapped };
}
