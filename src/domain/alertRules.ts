/**
 * Alert rules beyond the first occurrence: their kinds and the crossing logic the periodic
 * worker pass applies. Pure: the pass reads values and states, this decides what fires.
 */

import { compareVersions, crashFreeInterval, previousVersions, significanceGap } from './releaseHealth.ts';

export const RULE_KINDS = ['spike', 'crash_free', 'crash_free_regression'] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

export interface AlertRule {
  id: string;
  projectId: string;
  name: string;
  kind: RuleKind;
  /**
   * spike: occurrences of one group; crash_free: the percentage a release must stay at or above;
   * crash_free_regression: the gap in points the 95 % intervals must leave (0: any gap).
   */
  threshold: number;
  windowMinutes: number;
  /** crash_free: a release with fewer sessions in the window is not judged. */
  minSessions: number;
  /** spike: the crash levels counted (null: fatal and error, the crashes; ['warning', 'info'] alerts on messages). */
  levels: string[] | null;
  /** A subject that fired does not fire again within this many minutes, even if re-armed. */
  cooldownMinutes: number;
  /** null: the project's alert recipients; []: no email. */
  emails: string[] | null;
  webhookIds: string[];
  enabled: boolean;
  createdAt: string;
}

/** What a spike rule counts when it names no levels: crashes and errors, never messages. */
export const DEFAULT_SPIKE_LEVELS = ['fatal', 'error'] as const;

/** The levels a rule's pass counts. */
export const levelsCounted = (r: Pick<AlertRule, 'levels'>): readonly string[] => r.levels ?? DEFAULT_SPIKE_LEVELS;

/** The defaults a rule gets when its creator leaves them out. */
export const RULE_DEFAULTS = {
  windowMinutes: { spike: 60, crash_free: 1440, crash_free_regression: 1440 },
  minSessions: 50,
  cooldownMinutes: 60,
} as const;

/** Kinds judged per release, over sessions (with a minimum number of them). */
export const judgesReleases = (kind: RuleKind) => kind !== 'spike';

/**
 * What is wrong with a threshold for a rule's kind, or null: a crash-free threshold is a
 * percentage in (0, 100], a regression's a gap in points in [0, 100), a spike's a whole number
 * of occurrences, at least 1.
 */
export function thresholdProblem(kind: RuleKind, threshold: number): string | null {
  if (kind === 'crash_free' && (threshold <= 0 || threshold > 100))
    return 'a crash-free threshold is a percentage in (0, 100]';
  if (kind === 'crash_free_regression' && (threshold < 0 || threshold >= 100))
    return 'a regression threshold is a gap in points in [0, 100)';
  if (kind === 'spike' && (threshold < 1 || !Number.isInteger(threshold)))
    return 'a spike threshold is a whole number of occurrences, at least 1';
  return null;
}

/** One measured subject: a crash group (its key) or a release (its app version). */
export interface Measure {
  subject: string;
  value: number;
  /** crash_free: the sessions the percentage is over. */
  sessions?: number;
  /** crash_free_regression: the sentence that says what was compared (kept with the firing). */
  detail?: string;
}

export interface SubjectState {
  fired: boolean;
  lastFiredAt: number | null;
}

/** Whether the value is on the alerting side of the threshold. */
export function breaches(kind: RuleKind, threshold: number, value: number): boolean {
  // "passes N occurrences": reaching N counts; "falls below X %": X itself is fine.
  if (kind === 'spike') return value >= threshold;
  // the gap the intervals leave between them: wider than the threshold (0: any gap at all)
  if (kind === 'crash_free_regression') return value > threshold;
  return value < threshold;
}

/**
 * Crash-free sessions of a release in percent, or null when the release had too few sessions
 * in the window to be judged (one crash in two sessions must not page anyone).
 */
export function crashFreePercent(sessions: number, crashed: number, minSessions: number): number | null {
  if (sessions <= 0 || sessions < minSessions) return null;
  return ((sessions - Math.min(crashed, sessions)) / sessions) * 100;
}

/**
 * crash_free_regression: each release with at least `minSessions` sessions in the window against
 * the previous one (the next lower version, semver order, among those judged). The value is the
 * gap between the previous release's lower bound and this one's upper bound, in points: above
 * 0 the intervals do not overlap and the drop is significant, not the noise of a small rollout.
 */
export function regressionMeasures(
  versions: readonly { appVersion: string; sessions: number; crashed: number }[],
  minSessions: number,
): Measure[] {
  const judged = versions.filter((v) => v.sessions > 0 && v.sessions >= minSessions && v.appVersion !== '');
  const byVersion = new Map(judged.map((v) => [v.appVersion, v]));
  const prev = previousVersions(judged.map((v) => v.appVersion));
  const out: Measure[] = [];
  for (const v of [...judged].sort((a, b) => compareVersions(a.appVersion, b.appVersion))) {
    const p = byVersion.get(prev.get(v.appVersion) ?? '');
    if (!p) continue;
    const [ci, pci] = [crashFreeInterval(v.sessions, v.crashed), crashFreeInterval(p.sessions, p.crashed)];
    const gap = significanceGap(ci, pci);
    if (gap === null || !ci || !pci) continue;
    const rate = (x: { sessions: number; crashed: number }) =>
      Math.round(((x.sessions - Math.min(x.crashed, x.sessions)) / x.sessions) * 10_000) / 100;
    out.push({
      subject: v.appVersion,
      value: gap,
      sessions: v.sessions,
      detail:
        `crash-free sessions of release ${v.appVersion} are ${rate(v)}% ` +
        `(95 % interval ${ci.low}–${ci.high}%, ${v.sessions} sessions), significantly below release ` +
        `${p.appVersion} at ${rate(p)}% (${pci.low}–${pci.high}%, ${p.sessions} sessions)`,
    });
  }
  return out;
}

export interface Transitions {
  /** Subjects that crossed now: fire once. */
  fire: Measure[];
  /** Subjects that fired earlier and are back on the safe side: armed again. */
  rearm: string[];
}

/**
 * Once per crossing: a subject fires when it breaches and has not fired since it was last on
 * the safe side, unless it fired within the cooldown (it then fires on a later pass if it still
 * breaches). A subject absent from `measures` (no occurrences, or a release now below its
 * minimum sessions) is on the safe side for a spike and unjudged for crash-free.
 */
export function ruleTransitions(
  rule: Pick<AlertRule, 'kind' | 'threshold' | 'cooldownMinutes'>,
  measures: Measure[],
  states: ReadonlyMap<string, SubjectState>,
  now: number,
): Transitions {
  const fire: Measure[] = [];
  const rearm: string[] = [];
  const seen = new Set<string>();
  for (const m of measures) {
    seen.add(m.subject);
    const s = states.get(m.subject);
    if (breaches(rule.kind, rule.threshold, m.value)) {
      const cooling = s?.lastFiredAt != null && now - s.lastFiredAt < rule.cooldownMinutes * 60_000;
      if (!s?.fired && !cooling) fire.push(m);
    } else if (s?.fired) {
      rearm.push(m.subject);
    }
  }
  if (rule.kind === 'spike') {
    for (const [subject, s] of states) if (s.fired && !seen.has(subject)) rearm.push(subject);
  }
  return { fire, rearm };
}

/** The one-line description of a firing, for the email subject, the webhook text and Slack. */
export function describeFiring(
  rule: Pick<AlertRule, 'kind' | 'name' | 'threshold' | 'windowMinutes'>,
  f: { subject: string; value: number; sessions?: number | null; groupMessage?: string | null; detail?: string | null },
): string {
  if (rule.kind === 'crash_free_regression') {
    const what = f.detail ?? `crash-free sessions of release ${f.subject} are significantly below the previous release`;
    return `${rule.name}: ${what} in ${rule.windowMinutes} min`;
  }
  if (rule.kind === 'spike') {
    const what = f.groupMessage
      ? `"${f.groupMessage.replace(/\s+/g, ' ').slice(0, 120)}"`
      : `group ${f.subject.slice(0, 12)}`;
    return `${rule.name}: ${what} had ${f.value} occurrences in ${rule.windowMinutes} min (threshold ${rule.threshold})`;
  }
  const pct = Math.floor(f.value * 100) / 100;
  return `${rule.name}: crash-free sessions of release ${f.subject} fell to ${pct}% over ${f.sessions ?? '?'} sessions in ${rule.windowMinutes} min (threshold ${rule.threshold}%)`;
}
