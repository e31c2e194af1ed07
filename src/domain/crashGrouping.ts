import { createHash } from 'node:crypto';
import { normaliseStack } from './stackNormalise.ts';
import { groupKey, type GroupKeyOptions } from './grouping/groupKey.ts';

export type { GroupKeyOptions };

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** The head of a stack trace: its first five lines, split on \n with a trailing \r dropped (docs/decisions.md). */
export function stackHead(stackTrace: string): string {
  return stackTrace
    .split('\n')
    .slice(0, 5)
    .map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
    .join('\n');
}

/** The first five lines of the stack as the service normalises it (src/domain/stackNormalise.ts). */
export function normalisedHead(stackTrace: string): string {
  return normaliseStack(stackHead(stackTrace)).join('\n');
}

/**
 * The previous rule (v1), frozen: the SHA-256 of the stack's first five lines as
 * normaliseStack reads them. Groups made before the frame rule have these keys; a crash whose
 * current key has no group joins the group of its v1 key (docs/decisions.md, "One bug, one group").
 */
export function legacyGroupKey(stackTrace: string): string {
  return sha256(normalisedHead(stackTrace));
}

export const LEGACY_RULE_VERSION = 1;
export const GROUP_RULE_VERSION = 2;

/**
 * Crashes with the same key are one group (src/domain/grouping/groupKey.ts). `stackTrace` is the
 * stack as symbolicated with the release's artifacts where it has any (the caller's job);
 * `message` is the report's, read when the stack prints no message line (Gecko, JavaScriptCore).
 */
export function crashGroupKey(stackTrace: string, message = '', opts: GroupKeyOptions = {}): string {
  return groupKey(stackTrace, message, opts).key;
}

export interface CrashPayload {
  sessionId: string;
  message: string;
  stackTrace: string;
  isFatal: boolean;
  handled: boolean;
  timestamp: number;
  /** Replaces the group key when valid (src/domain/grouping/groupKey.ts); not part of the occurrence's identity. */
  fingerprint?: unknown;
}

/** An occurrence is its whole payload: a retried report has the same id and adds nothing. */
export function crashOccurrenceId(c: CrashPayload): string {
  return sha256(JSON.stringify([c.sessionId, c.message, c.stackTrace, c.isFatal, c.handled, c.timestamp]));
}

export interface DeviceTraits {
  platform?: string | null;
  brand?: string | null;
  model?: string | null;
  osVersion?: string | null;
  screenWidth?: number | null;
  screenHeight?: number | null;
  locale?: string | null;
  timezone?: string | null;
}

/** What counts as "one device" for affectedDevices. */
export function deviceFingerprint(d: DeviceTraits): string {
  return sha256(
    JSON.stringify([
      d.platform ?? null,
      d.brand ?? null,
      d.model ?? null,
      d.osVersion ?? null,
      d.screenWidth ?? null,
      d.screenHeight ?? null,
      d.locale ?? null,
      d.timezone ?? null,
    ]),
  );
}
