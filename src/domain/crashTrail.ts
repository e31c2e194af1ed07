import { normaliseMessage } from './stackNormalise.ts';

/**
 * The trail before a crash: across a group's occurrences, the sequences of session events
 * (screens, taps, custom events, failing requests) in the seconds before each crash, counted so
 * that the most common way into the crash reads first (docs/decisions.md, "Crash suspects and
 * the trail"). Pure: the events of each occurrence's window in, counted trails out.
 */

export const TRAIL_WINDOW_SECONDS = { default: 30, min: 5, max: 300 } as const;
export const TRAIL_STEPS = { default: 5, min: 1, max: 10 } as const;
/** How many of the group's latest occurrences a trail is built from. */
export const TRAIL_SAMPLE = 2_000;
/** Raw steps read per occurrence: enough for `TRAIL_STEPS.max` once repeats collapse. */
export const TRAIL_RAW_STEPS = 40;

export type StepKind = 'screen' | 'tap' | 'event' | 'request';

/** One event of a window as stored. A request is only read when it failed. */
export interface RawStep {
  kind: StepKind;
  /** screen: the navigation's `to`; tap: its target; event: the custom event's name; request: the URL */
  text: string;
  method?: string;
  status?: number | null;
}

export interface TrailStep {
  kind: StepKind;
  label: string;
}

/** Text is cut before any pattern runs, so a hostile value costs a bounded, linear read. */
const MAX_TEXT = 200;

const cut = (s: string) => (s.length > MAX_TEXT ? s.slice(0, MAX_TEXT) : s);

/** `host/path` of a URL (scheme, credentials, query and fragment dropped), read in one pass. */
export function hostPath(url: string): string {
  let s = cut(url.trim());
  const scheme = s.indexOf('://');
  if (scheme >= 0 && /^[a-z][a-z0-9+.-]*$/i.test(s.slice(0, scheme))) s = s.slice(scheme + 3);
  let end = s.length;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '?' || s[i] === '#') {
      end = i;
      break;
    }
  }
  s = s.slice(0, end);
  const slash = s.indexOf('/');
  const authority = slash < 0 ? s : s.slice(0, slash);
  const at = authority.lastIndexOf('@');
  return at >= 0 ? s.slice(at + 1) : s;
}

/** A step as a person reads it, with ids and numbers collapsed (stackNormalise's message rules). */
export function stepOf(raw: RawStep): TrailStep {
  if (raw.kind === 'request') {
    const method = cut(raw.method ?? '').toUpperCase() || 'GET';
    const status = raw.status === null || raw.status === undefined ? 'error' : String(raw.status);
    const where = normaliseMessage(hostPath(raw.text));
    return { kind: 'request', label: `${normaliseMessage(method)} ${where} → ${status}` };
  }
  return { kind: raw.kind, label: normaliseMessage(cut(raw.text)) || '(unnamed)' };
}

/** The last `k` steps of one window (events in time order), consecutive repeats collapsed. */
export function trailOf(raw: readonly RawStep[], k: number): TrailStep[] {
  const steps: TrailStep[] = [];
  for (const r of raw) {
    const s = stepOf(r);
    const prev = steps[steps.length - 1];
    if (prev && prev.kind === s.kind && prev.label === s.label) continue;
    steps.push(s);
  }
  return steps.slice(Math.max(0, steps.length - k));
}

/** One occurrence's window: its session, when it crashed, and its events in time order. */
export interface TrailWindow {
  sessionId: string;
  occurredAt: number;
  steps: readonly RawStep[];
}

export interface CommonTrail {
  steps: TrailStep[];
  occurrences: number;
  /** of the sampled occurrences */
  share: number;
  /** a session that followed this trail: the one of the latest such occurrence */
  sessionId: string;
  occurredAt: number;
}

export interface TrailSummary {
  /** occurrences read (the latest of the group, at most TRAIL_SAMPLE) */
  sampled: number;
  /** of them, those with no event in the window */
  withoutEvents: number;
  trails: CommonTrail[];
}

/** The most common trails (at most `limit`), most shared first; ties: the more recent first. */
export function commonTrails(windows: readonly TrailWindow[], k: number, limit = 10): TrailSummary {
  const byKey = new Map<string, CommonTrail>();
  let withoutEvents = 0;
  for (const w of windows) {
    const steps = trailOf(w.steps, k);
    if (steps.length === 0) {
      withoutEvents++;
      continue;
    }
    const key = JSON.stringify(steps.map((s) => [s.kind, s.label]));
    const t = byKey.get(key);
    if (!t) {
      byKey.set(key, { steps, occurrences: 1, share: 0, sessionId: w.sessionId, occurredAt: w.occurredAt });
    } else {
      t.occurrences++;
      if (w.occurredAt > t.occurredAt) {
        t.occurredAt = w.occurredAt;
        t.sessionId = w.sessionId;
      }
    }
  }
  const trails = [...byKey.values()]
    .map((t) => ({ ...t, share: windows.length ? t.occurrences / windows.length : 0 }))
    .sort(
      (a, b) =>
        b.occurrences - a.occurrences ||
        b.occurredAt - a.occurredAt ||
        (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0),
    );
  return { sampled: windows.length, withoutEvents, trails: trails.slice(0, limit) };
}
