import { createHash } from 'node:crypto';
import { parseStack } from './grouping/groupKey.ts';

/**
 * A project's fingerprint rules: "crashes that match this are one group, whatever the default
 * key says". Rules are read in order and the first match wins. Patterns are globs (`*` is any
 * run of characters, everything else literal, case-sensitive), matched in time linear in the
 * text: user input never becomes a regex.
 */

export const FINGERPRINT_RULE_FIELDS = ['type', 'message', 'module', 'function'] as const;
export type FingerprintRuleField = (typeof FINGERPRINT_RULE_FIELDS)[number];

export type FingerprintMatch = Partial<Record<FingerprintRuleField, string>>;

export interface FingerprintRuleSpec {
  match: FingerprintMatch;
  /** The group's fingerprint; `{{default}}` stands for the default key. */
  fingerprint: string[];
}

export interface FingerprintRule extends FingerprintRuleSpec {
  id: string;
  projectId: string;
  createdAt: string;
}

/** What a rule is matched against: the exception's type and message and the parsed frames. */
export interface FingerprintInput {
  type: string;
  message: string;
  frames: { module: string; function: string }[];
}

export const MAX_RULES_PER_PROJECT = 50;
export const MAX_PATTERN_LENGTH = 200;
export const MAX_FINGERPRINT_PARTS = 10;
export const MAX_FINGERPRINT_PART_LENGTH = 200;
/** Text is cut to this many characters before a pattern runs (a message may be megabytes). */
export const MATCH_TEXT_LIMIT = 1024;
/** Frames beyond this many are not looked at (a stack overflow's thousands). */
export const MATCH_FRAME_LIMIT = 200;

const DEFAULT_PART = /^\{\{\s*default\s*\}\}$/;

/** Failure function of a literal (Knuth–Morris–Pratt): lets a search never step back in the text. */
function failure(p: string): Int32Array {
  const f = new Int32Array(p.length);
  for (let i = 1, k = 0; i < p.length; i++) {
    while (k > 0 && p[i] !== p[k]) k = f[k - 1] ?? 0;
    if (p[i] === p[k]) k++;
    f[i] = k;
  }
  return f;
}

/** The end of the first occurrence of `lit` in `text[from, to)`, or -1. O(to - from + lit). */
function findIn(text: string, lit: string, from: number, to: number): number {
  const f = failure(lit);
  for (let i = from, k = 0; i < to; i++) {
    while (k > 0 && text[i] !== lit[k]) k = f[k - 1] ?? 0;
    if (text[i] === lit[k]) k++;
    if (k === lit.length) return i + 1;
  }
  return -1;
}

/**
 * Whether `text` matches the glob `pattern` (`*` only). The pattern's literal runs are found
 * left to right, each at its earliest place after the previous one (which is never worse for
 * the runs after it), the first anchored at the start and the last at the end: each character
 * of the text is read a bounded number of times per run, so the time is linear.
 */
export function globMatch(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  const first = parts[0] ?? '';
  const last = parts.at(-1) ?? '';
  if (parts.length === 1) return pattern === text;
  if (first.length + last.length > text.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (const lit of parts.slice(1, -1)) {
    if (lit.length === 0) continue;
    const found = findIn(text, lit, at, end);
    if (found < 0) return false;
    at = found;
  }
  return true;
}

const cut = (s: string) => (s.length > MATCH_TEXT_LIMIT ? s.slice(0, MATCH_TEXT_LIMIT) : s);

/** Whether every matcher of the rule holds: type and message on the crash, module and function on one same frame. */
export function ruleMatches(match: FingerprintMatch, input: FingerprintInput): boolean {
  if (match.type !== undefined && !globMatch(match.type, cut(input.type))) return false;
  if (match.message !== undefined && !globMatch(match.message, cut(input.message))) return false;
  if (match.module === undefined && match.function === undefined) return true;
  const frames = input.frames.length > MATCH_FRAME_LIMIT ? input.frames.slice(0, MATCH_FRAME_LIMIT) : input.frames;
  return frames.some(
    (f) =>
      (match.module === undefined || globMatch(match.module, cut(f.module))) &&
      (match.function === undefined || globMatch(match.function, cut(f.function))),
  );
}

/** The first rule that matches, in order; undefined when none does. */
export function firstMatchingRule<R extends FingerprintRuleSpec>(
  rules: readonly R[],
  input: FingerprintInput,
): R | undefined {
  return rules.find((r) => ruleMatches(r.match, input));
}

/**
 * The group key a fingerprint gives: `{{default}}` parts are the default key. A fingerprint that
 * is only `{{default}}` is the default key itself; any other is hashed with a prefix no default
 * key hashes, so a rule's group never meets a stack's by chance.
 */
export function fingerprintKey(fingerprint: readonly string[], defaultKey: string): string {
  const parts = fingerprint.map((p) => (DEFAULT_PART.test(p) ? { default: defaultKey } : p));
  if (parts.length === 1 && typeof parts[0] === 'object') return defaultKey;
  return createHash('sha256')
    .update(`fingerprint\n${JSON.stringify(parts)}`)
    .digest('hex');
}

/** The key of a crash under a project's rules: the first matching rule's fingerprint, else the default key. */
export function keyUnderRules(
  rules: readonly FingerprintRuleSpec[],
  input: FingerprintInput,
  defaultKey: string,
): string {
  const rule = firstMatchingRule(rules, input);
  return rule ? fingerprintKey(rule.fingerprint, defaultKey) : defaultKey;
}

/** What the JSON schema cannot say about a rule: it must match on something. Paths point into the request body. */
export function fingerprintRuleProblems(r: FingerprintRuleSpec): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  if (!FINGERPRINT_RULE_FIELDS.some((k) => r.match[k] !== undefined)) {
    problems.push({ path: '/match', message: `name at least one of ${FINGERPRINT_RULE_FIELDS.join(', ')}` });
  }
  return problems;
}

// `.` is in no run's class, so the pattern reads a name in one pass (no backtracking).
const TYPE = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;

/**
 * What the rules read of a crash: its message line (the stack's first line when that is not a
 * frame, as V8 and the JVM print it, else the report's message) split into the exception's type
 * and message at the first `: ` when what comes before is a name (`TypeError`,
 * `java.lang.IllegalStateException`); otherwise no type and the whole line as the message. The
 * frames are the parsed ones among the stack's first lines (src/domain/grouping/groupKey.ts).
 */
export function fingerprintInput(
  stack: string,
  message: string,
  inAppPackages: readonly string[] = [],
): FingerprintInput {
  const parsed = parseStack(stack, inAppPackages);
  const first = (t: string) => (t.slice(0, MATCH_TEXT_LIMIT * 4).split('\n', 1)[0] ?? '').replace(/\r$/, '').trim();
  const line = first(parsed[0] || stack.trim() === '' ? message : stack).replace(/^Uncaught (?:\(in promise\) )?/, '');
  const colon = line.indexOf(': ');
  const head = colon > 0 && colon <= MAX_PATTERN_LENGTH ? line.slice(0, colon) : '';
  const [type, text] = TYPE.test(head) ? [head, line.slice(colon + 2)] : ['', line];
  const frames = parsed.filter((f) => f !== null).map((f) => ({ module: f.module, function: f.function ?? '' }));
  return { type, message: text, frames };
}
