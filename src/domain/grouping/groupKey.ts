/**
 * The group key (docs/decisions.md, "One bug, one group: grouping on parsed frames"): the SHA-256
 * of the message line, with its values replaced, and at most four frames written `module
 * function`, the app's own before the runtime's and the OS's. Pure.
 */
import { createHash } from 'node:crypto';
import { normaliseMessage, normaliseStack, stackLines } from '../stackNormalise.ts';
import { frameText, parseFrame, type Frame } from './frames.ts';
import { present } from '../../lib/invariant.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export interface GroupKeyOptions {
  /** The project's own packages (module or class prefixes), read as app frames. */
  inAppPackages?: readonly string[];
  /** The report's `fingerprint` field, as sent: used when valid (validFingerprint), else ignored. */
  fingerprint?: unknown;
}

export interface GroupKeyResult {
  key: string;
  /** What decided the key: parsed frames, the normalised lines (no frame parsed), a built-in or the report's fingerprint. */
  source: 'frames' | 'lines' | 'chunk-load' | 'fingerprint';
  /** The hashed text (tests, support). */
  text: string;
}

/** The contract's head: the frames are read among these first lines. */
export const HEAD_LINES = 5;
/** At most this many frames are hashed. */
export const KEY_FRAMES = 4;
/** When no app frame is in the head, the first app frame is looked for down to this line. */
export const APP_FRAME_REACH = 64;

export const MAX_FINGERPRINT_PARTS = 10;
export const MAX_FINGERPRINT_CHARS = 200;
export const DEFAULT_FINGERPRINT = '{{default}}';

/** A report's fingerprint when it is one (1–10 strings of at most 200 characters), else null: dropped, never an error. */
export function validFingerprint(v: unknown): string[] | null {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_FINGERPRINT_PARTS) return null;
  return v.every((p) => typeof p === 'string' && p.length <= MAX_FINGERPRINT_CHARS) ? (v as string[]) : null;
}

// A script chunk that did not load (a deploy replaced it, the network dropped): one bug per
// project whichever chunk. webpack, its CSS loader, Vite / native dynamic import in Chrome,
// Firefox and Safari.
const CHUNK_LOAD =
  /ChunkLoadError|Loading (?:CSS )?chunk \S{1,200} failed|Failed to fetch dynamically imported module|error loading dynamically imported module|Importing a module script failed/i;

export const isChunkLoadFailure = (messageLine: string) => CHUNK_LOAD.test(messageLine);

const firstLine = (s: string) => stackLines(s.slice(0, 4096))[0] ?? '';
// "Uncaught" is how window.onerror words it; a plain `Error:` is what V8 prints for an Error whose
// report (and Gecko's) carries the bare message: neither tells two bugs apart.
const bareMessage = (s: string) => s.replace(/^\s*Uncaught (?:\(in promise\) )?/, '').replace(/^Error: /, '');

/** The frames of a stack's first `reach` lines (null where a line is no frame). */
export function parseStack(
  stack: string,
  inAppPackages: readonly string[] = [],
  reach = APP_FRAME_REACH,
): (Frame | null)[] {
  return stackLines(stack.split('\n', reach).join('\n')).map((l) => parseFrame(l, inAppPackages));
}

/** The crash page reads at most this many lines of a stack as frames. */
export const SHOWN_LINES = 256;

/** A stack's lines as the crash page shows them: each with its parsed frame (null for a message or other line). */
export function stackFrames(
  stack: string,
  inAppPackages: readonly string[] = [],
): { text: string; frame: Frame | null }[] {
  return stackLines(stack.split('\n', SHOWN_LINES).join('\n')).map((text) => ({
    text,
    frame: parseFrame(text, inAppPackages),
  }));
}

/**
 * The frames the key hashes: the app frames among the head's lines (at most four), else, when
 * the head holds none, from the first app frame on; a stack of no app frame at all keeps its head.
 */
export function keyFrames(parsed: readonly (Frame | null)[]): Frame[] {
  const frames = (from: number, to: number) => parsed.slice(from, to).filter((f): f is Frame => f !== null);
  const head = frames(0, HEAD_LINES);
  const app = head.filter((f) => f.inApp);
  if (app.length > 0) return app.slice(0, KEY_FRAMES);
  const first = parsed.findIndex((f) => f?.inApp);
  if (first >= 0)
    return frames(first, parsed.length)
      .filter((f) => f.inApp)
      .slice(0, KEY_FRAMES);
  return (head.length > 0 ? head : frames(0, parsed.length)).slice(0, KEY_FRAMES);
}

/** The default key of a report, then its fingerprint's when it sends a valid one. */
export function groupKey(stack: string, message: string, opts: GroupKeyOptions = {}): GroupKeyResult {
  const def = defaultKey(stack, message, opts.inAppPackages ?? []);
  const fp = validFingerprint(opts.fingerprint);
  if (!fp) return def;
  const text = JSON.stringify(['fingerprint', ...fp.map((p) => (p === DEFAULT_FINGERPRINT ? def.key : p))]);
  return { key: sha256(text), source: 'fingerprint', text };
}

/** A whole Apple crash report is read from its crashed thread; its header is looked through this far. */
export const CRASH_REPORT_REACH = 1024;
// The backtrace an Apple crash report blames: the uncaught exception's, else the crashed thread's.
const EXCEPTION_BACKTRACE = /^Last Exception Backtrace:/;
const CRASHED_THREAD = /^Thread \d+ Crashed:/;
const EXCEPTION_TYPE = /^Exception Type:\s*(.*)$/;

/**
 * A whole Apple crash report sent as the stack (a header of device and process facts, then one
 * backtrace per thread): where its blamed backtrace starts and what its exception type says, or null.
 */
function crashReport(stack: string): { from: number; lines: string[]; exceptionType: string | null } | null {
  const lines = stackLines(stack.split('\n', CRASH_REPORT_REACH).join('\n'));
  let from = lines.findIndex((l) => EXCEPTION_BACKTRACE.test(l));
  if (from < 0) from = lines.findIndex((l) => CRASHED_THREAD.test(l));
  if (from < 0) return null;
  let exceptionType: string | null = null;
  for (const l of lines.slice(0, from)) {
    const m = EXCEPTION_TYPE.exec(l);
    if (m) exceptionType = present(m[1], 'exception type group').trim();
  }
  return { from: from + 1, lines, exceptionType };
}

// A native crash's signal or Mach exception ("EXC_BAD_ACCESS (SIGSEGV)", "SIGSEGV", "SIGBUS"): each
// crash reporter words it its own way, and one bug raises SIGSEGV on one CPU and SIGBUS on
// another; the frames tell native bugs apart, so the key reads the words as one placeholder.
const NATIVE_SIGNAL =
  /^(?:EXC_[A-Z_]{1,40}(?:\s*\((?:SIG[A-Z]{2,8}|code[^()]{0,40})\))?|SIG[A-Z]{2,8}|Signal \d+|signal \d+)\.?$/;
export const SIGNAL_PLACEHOLDER = '<signal>';
const nativeMessage = (line: string) => (NATIVE_SIGNAL.test(line.trim()) ? SIGNAL_PLACEHOLDER : line);

function defaultKey(stack: string, message: string, inAppPackages: readonly string[]): GroupKeyResult {
  const report = crashReport(stack);
  if (report) {
    // The header (incident id, hardware model, OS version, paths) differs on every device: the
    // key reads the exception type (or the report's message) and the blamed backtrace's frames.
    const parsed = report.lines
      .slice(report.from, report.from + APP_FRAME_REACH)
      .map((l) => parseFrame(l, inAppPackages));
    if (parsed.some((f) => f !== null)) {
      const messageLine = nativeMessage(
        normaliseMessage(report.exceptionType ?? bareMessage(firstLine(message)).trim(), { quoted: true }),
      );
      const text = ['v2', messageLine, ...keyFrames(parsed).map(frameText)].join('\n');
      return { key: sha256(text), source: 'frames', text };
    }
  }
  const parsed = parseStack(stack, inAppPackages);
  const head = parsed.slice(0, HEAD_LINES);
  // V8 and the JVM print the message as the stack's first line; Gecko and JavaScriptCore do not.
  const rawMessage = head[0] || stack.trim() === '' ? firstLine(message) : firstLine(stack);
  if (isChunkLoadFailure(rawMessage) || isChunkLoadFailure(firstLine(message)))
    return { key: sha256('chunk-load'), source: 'chunk-load', text: 'chunk-load' };
  if (!parsed.some((f) => f !== null)) {
    // No frame parsed: the previous rule's five normalised lines (its key, so nothing moves),
    // or the message when the stack is empty.
    if (stack.trim() === '') {
      const text = `message\n${normaliseMessage(bareMessage(firstLine(message)), { quoted: true })}`;
      return { key: sha256(text), source: 'lines', text };
    }
    const text = normaliseStack(stack.split('\n', HEAD_LINES).join('\n')).join('\n');
    return { key: sha256(text), source: 'lines', text };
  }
  // Frames only after the head (a long message, a log's preamble): the first app frame on, as
  // when the head holds only system frames.
  const messageLine = nativeMessage(normaliseMessage(bareMessage(rawMessage).trim(), { quoted: true }));
  const text = ['v2', messageLine, ...keyFrames(parsed).map(frameText)].join('\n');
  return { key: sha256(text), source: 'frames', text };
}
