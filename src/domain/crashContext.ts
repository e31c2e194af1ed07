import { nestsDeeperThan } from '../lib/jsonDepth.ts';

/**
 * The optional context of a crash report (POST /ingest/crash): environment, a user id, tags, a
 * free-form context object, breadcrumbs and a level. None of it may fail the report: a value that
 * is of the wrong type, too large or malformed is dropped (or, for lists, cut) and the reason is
 * kept with the occurrence, so a person sees what the SDK sent that was not kept.
 * Bounds and rules: docs/decisions.md, "Crash context".
 */

export const CRASH_LEVELS = ['fatal', 'error', 'warning', 'info'] as const;
export type CrashLevel = (typeof CRASH_LEVELS)[number];
/** Levels of a message (captureMessage): counted apart from crashes and errors. */
export const MESSAGE_LEVELS: readonly CrashLevel[] = ['warning', 'info'];
/** What a crash list shows by default: crashes and errors. */
export const CRASH_LIST_LEVELS: readonly CrashLevel[] = ['fatal', 'error'];
export const BREADCRUMB_LEVELS = ['fatal', 'error', 'warning', 'info', 'debug'] as const;

export const LIMITS = {
  environmentChars: 64,
  userIdChars: 1024,
  tags: 50,
  tagKeyChars: 32,
  tagValueChars: 200,
  contextBytes: 8192,
  contextDepth: 5,
  breadcrumbs: 100,
  breadcrumbsBytes: 32_768,
  breadcrumbMessageChars: 1024,
  breadcrumbCategoryChars: 64,
  breadcrumbDataBytes: 2048,
  breadcrumbDataDepth: 3,
  /** reasons kept per report: a hostile list of 10k bad entries yields a bounded record */
  dropped: 20,
} as const;

export interface Breadcrumb {
  timestamp: number;
  category: string;
  message: string;
  level: (typeof BREADCRUMB_LEVELS)[number];
  data?: Record<string, unknown>;
}

export interface DroppedField {
  field: string;
  reason: string;
}

/** The bounded context, as stored with the occurrence. */
export interface CrashContext {
  /** '' when none was sent (or it was dropped) */
  environment: string;
  /** the report's own user id, when it sent a valid one (else the session's applies) */
  userId: string | null;
  tags: Record<string, string>;
  /** the context object as JSON text ('' when none) */
  context: string;
  breadcrumbs: Breadcrumb[];
  level: CrashLevel;
  dropped: DroppedField[];
}

/** The optional fields as they arrive: anything at all (untyped in the schema, so they never fail the report). */
export interface RawCrashContext {
  environment?: unknown;
  userId?: unknown;
  tags?: unknown;
  context?: unknown;
  breadcrumbs?: unknown;
  level?: unknown;
}

// Keys that would reach an object's prototype in a consumer that copies with assignment.
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const ENVIRONMENT = /^[A-Za-z0-9_.-]+$/;
const TAG_KEY = /^[A-Za-z0-9_.:-]+$/;
// C0, DEL and C1 controls: they break CSV cells, terminals and chips, and never belong in a name.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// In free text, tab and newlines are kept; other controls become U+FFFD.
// eslint-disable-next-line no-control-regex
const TEXT_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;
const MAX_MS = 10_000_000_000_000;

// A surrogate without its partner (with the `u` flag a valid pair is one code point): ClickHouse
// refuses it in an insert, which would fail the report.
const LONE_SURROGATE = /[\ud800-\udfff]/gu;
const wellFormed = (s: string) => s.replace(LONE_SURROGATE, '\uFFFD');

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const utf8Bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** What a value was, for a reason (never the value itself: it may be huge or hostile). */
function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

/**
 * A short name, or why it is refused. Length is checked before any pattern runs, and the
 * patterns are single character classes, so hostile input is read in linear time.
 */
function name(v: unknown, max: number, pattern: RegExp | null, what: string): { ok: string } | { reason: string } {
  if (typeof v !== 'string') return { reason: `must be a string, got ${kindOf(v)}` };
  if (v.length === 0) return { reason: 'must not be empty' };
  if (v.length > max) return { reason: `longer than ${max} characters (${v.length})` };
  if (CONTROL.test(v)) return { reason: 'contains control characters' };
  if (pattern && !pattern.test(v)) return { reason: `must be made of ${what}` };
  return { ok: wellFormed(v) };
}

const cleanText = (s: string) => wellFormed(s.replace(TEXT_CONTROL, '\uFFFD'));

/**
 * A copy of a JSON object without prototype keys, free text cleaned; `removed` counts the keys
 * taken out. Only called on values already known to nest no deeper than a small bound.
 */
function sanitised(v: unknown, removed: { n: number }): unknown {
  if (typeof v === 'string') return cleanText(v);
  if (Array.isArray(v)) return v.map((x) => sanitised(x, removed));
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (RESERVED_KEYS.has(k)) {
        removed.n++;
        continue;
      }
      // defineProperty: an own key never reaches a prototype, whatever its name
      const value = sanitised(x, removed);
      Object.defineProperty(out, cleanText(k), { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  if (typeof v === 'number' && !Number.isFinite(v)) return null;
  return v;
}

/** An environment as kept (a session's or a report's), or null when it is not one. */
export function validEnvironment(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  const e = name(v, LIMITS.environmentChars, ENVIRONMENT, '');
  return 'ok' in e ? e.ok : null;
}

/** The default level, and the rule when a level contradicts isFatal: isFatal wins (it decides the session's crash). */
export function resolveLevel(raw: unknown, isFatal: boolean): { level: CrashLevel; reason?: string } {
  const fallback: CrashLevel = isFatal ? 'fatal' : 'error';
  if (raw === undefined || raw === null) return { level: fallback };
  if (typeof raw !== 'string' || !(CRASH_LEVELS as readonly string[]).includes(raw)) {
    return { level: fallback, reason: `must be one of ${CRASH_LEVELS.join(', ')}; ${fallback} used` };
  }
  const level = raw as CrashLevel;
  if (isFatal && level !== 'fatal') {
    return { level: 'fatal', reason: `"${level}" contradicts isFatal: true; fatal used` };
  }
  if (!isFatal && level === 'fatal') {
    return { level: 'error', reason: '"fatal" contradicts isFatal: false; error used' };
  }
  return { level };
}

/** The most severe of some levels (fatal first); error when none is known. */
export function mostSevere(levels: readonly string[]): CrashLevel {
  for (const l of CRASH_LEVELS) if (levels.includes(l)) return l;
  return 'error';
}

export const isMessageLevel = (level: string) => (MESSAGE_LEVELS as readonly string[]).includes(level);

function boundTags(raw: unknown, drop: (field: string, reason: string) => void): Record<string, string> {
  const tags: Record<string, string> = {};
  if (raw === undefined || raw === null) return tags;
  if (!isPlainObject(raw)) {
    drop('tags', `must be an object of strings, got ${kindOf(raw)}`);
    return tags;
  }
  let kept = 0;
  let over = 0;
  for (const [k, v] of Object.entries(raw)) {
    const key = name(k, LIMITS.tagKeyChars, TAG_KEY, 'letters, digits, _ . : -');
    if ('reason' in key) {
      drop('tags', `a key ${key.reason}`);
      continue;
    }
    if (RESERVED_KEYS.has(k)) {
      drop(`tags.${k}`, 'reserved key');
      continue;
    }
    const value = name(v, LIMITS.tagValueChars, null, '');
    if ('reason' in value) {
      drop(`tags.${k}`, `value ${value.reason}`);
      continue;
    }
    if (kept >= LIMITS.tags) {
      over++;
      continue;
    }
    Object.defineProperty(tags, key.ok, { value: value.ok, enumerable: true, writable: true, configurable: true });
    kept++;
  }
  if (over > 0) drop('tags', `more than ${LIMITS.tags} tags: ${over} dropped`);
  return tags;
}

function boundContext(raw: unknown, drop: (field: string, reason: string) => void): string {
  if (raw === undefined || raw === null) return '';
  if (!isPlainObject(raw)) {
    drop('context', `must be an object, got ${kindOf(raw)}`);
    return '';
  }
  // Depth first, iteratively: a value nested 100k deep must not reach a recursive walk.
  if (nestsDeeperThan(raw, LIMITS.contextDepth)) {
    drop('context', `nests deeper than ${LIMITS.contextDepth} levels`);
    return '';
  }
  const removed = { n: 0 };
  const text = JSON.stringify(sanitised(raw, removed));
  if (removed.n > 0) drop('context', `${removed.n} reserved key(s) (__proto__, constructor, prototype) removed`);
  const bytes = utf8Bytes(text);
  if (bytes > LIMITS.contextBytes) {
    drop('context', `larger than ${LIMITS.contextBytes} bytes as JSON (${bytes})`);
    return '';
  }
  return text === '{}' ? '' : text;
}

function breadcrumb(raw: unknown, i: number, drop: (field: string, reason: string) => void): Breadcrumb | null {
  const field = `breadcrumbs[${i}]`;
  if (!isPlainObject(raw)) {
    drop(field, `must be an object, got ${kindOf(raw)}`);
    return null;
  }
  const t = raw.timestamp;
  if (typeof t !== 'number' || !Number.isFinite(t) || t < 0 || t > MAX_MS) {
    drop(field, 'timestamp must be a number of ms since the epoch');
    return null;
  }
  const ts = Math.round(t);
  const category = name(raw.category, LIMITS.breadcrumbCategoryChars, null, '');
  if ('reason' in category) {
    drop(field, `category ${category.reason}`);
    return null;
  }
  const m = raw.message ?? '';
  if (typeof m !== 'string') {
    drop(field, `message must be a string, got ${kindOf(m)}`);
    return null;
  }
  if (m.length > LIMITS.breadcrumbMessageChars) {
    drop(field, `message longer than ${LIMITS.breadcrumbMessageChars} characters (${m.length})`);
    return null;
  }
  let level: Breadcrumb['level'] = 'info';
  if (raw.level !== undefined && raw.level !== null) {
    const known = typeof raw.level === 'string' && (BREADCRUMB_LEVELS as readonly string[]).includes(raw.level);
    if (known) level = raw.level as Breadcrumb['level'];
    else drop(field, `level must be one of ${BREADCRUMB_LEVELS.join(', ')}; info used`);
  }
  const out: Breadcrumb = { timestamp: ts, category: category.ok, message: cleanText(m), level };
  const data = raw.data;
  if (data !== undefined && data !== null) {
    if (!isPlainObject(data)) drop(`${field}.data`, `must be an object, got ${kindOf(data)}`);
    else if (nestsDeeperThan(data, LIMITS.breadcrumbDataDepth)) {
      drop(`${field}.data`, `nests deeper than ${LIMITS.breadcrumbDataDepth} levels`);
    } else {
      const removed = { n: 0 };
      const clean = sanitised(data, removed) as Record<string, unknown>;
      const bytes = utf8Bytes(JSON.stringify(clean));
      if (removed.n > 0) drop(`${field}.data`, `${removed.n} reserved key(s) removed`);
      if (bytes > LIMITS.breadcrumbDataBytes) {
        drop(`${field}.data`, `larger than ${LIMITS.breadcrumbDataBytes} bytes as JSON (${bytes})`);
      } else if (Object.keys(clean).length > 0) out.data = clean;
    }
  }
  return out;
}

function boundBreadcrumbs(raw: unknown, drop: (field: string, reason: string) => void): Breadcrumb[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    drop('breadcrumbs', `must be an array, got ${kindOf(raw)}`);
    return [];
  }
  // The trail's end is what led to the crash: keep the most recent entries.
  let from = 0;
  if (raw.length > LIMITS.breadcrumbs) {
    from = raw.length - LIMITS.breadcrumbs;
    drop('breadcrumbs', `more than ${LIMITS.breadcrumbs} entries: the first ${from} dropped`);
  }
  const kept: Breadcrumb[] = [];
  for (let i = from; i < raw.length; i++) {
    const b = breadcrumb(raw[i], i, drop);
    if (b) kept.push(b);
  }
  // Over the byte budget: the oldest go first.
  let bytes = utf8Bytes(JSON.stringify(kept));
  let cut = 0;
  while (bytes > LIMITS.breadcrumbsBytes && cut < kept.length) {
    bytes -= utf8Bytes(JSON.stringify(kept[cut])) + 1;
    cut++;
  }
  if (cut > 0) drop('breadcrumbs', `larger than ${LIMITS.breadcrumbsBytes} bytes as JSON: the oldest ${cut} dropped`);
  return kept.slice(cut);
}

/**
 * Bounds the optional fields of one crash report. Pure; never throws on any input. Each value
 * is kept whole or dropped with a reason; lists (tags, breadcrumbs) keep what fits.
 */
export function boundCrashContext(raw: RawCrashContext, isFatal: boolean): CrashContext {
  const dropped: DroppedField[] = [];
  let more = 0;
  const drop = (field: string, reason: string) => {
    if (dropped.length < LIMITS.dropped) dropped.push({ field, reason });
    else more++;
  };

  let environment = '';
  if (raw.environment !== undefined && raw.environment !== null) {
    const e = name(raw.environment, LIMITS.environmentChars, ENVIRONMENT, 'letters, digits, _ . -');
    if ('ok' in e) environment = e.ok;
    else drop('environment', e.reason);
  }

  let userId: string | null = null;
  if (raw.userId !== undefined && raw.userId !== null) {
    const u = name(raw.userId, LIMITS.userIdChars, null, '');
    if ('ok' in u) userId = u.ok;
    else drop('userId', `${u.reason}; the session's user kept`);
  }

  const tags = boundTags(raw.tags, drop);
  const context = boundContext(raw.context, drop);
  const breadcrumbs = boundBreadcrumbs(raw.breadcrumbs, drop);
  const lv = resolveLevel(raw.level, isFatal);
  if (lv.reason) drop('level', lv.reason);
  if (more > 0) dropped.push({ field: '*', reason: `${more} more reason(s) not kept` });
  return { environment, userId, tags, context, breadcrumbs, level: lv.level, dropped };
}
