import type { CrashPayload } from '../../domain/crashGrouping.ts';
import type { RawCrashContext } from '../../domain/crashContext.ts';
import type { FingerprintRuleSpec } from '../../domain/fingerprintRules.ts';
import type { SymbolicatedStack } from '../../domain/symbolication/index.ts';
import type { CrashGroupsRepo } from '../../repos/crashGroups/index.ts';
import type { CrashOccurrencesRepo } from '../../repos/crashOccurrences.ts';
import type { CrashingSession, SessionsRepo } from '../../repos/sessions.ts';

/** What recording takes and answers (the steps share these; index.ts is the entry). */

export type RecordCrashResult =
  | { outcome: 'no-session' }
  | { outcome: 'recorded'; groupId: string; newGroup: boolean; regressed?: boolean };

/** One crash report of a batch: the project it was accepted for and the report. */
export interface CrashInput {
  projectId: string;
  crash: CrashPayload & RawCrashContext;
}

/** A batch's answer for one report: recorded, its session gone, or refused for an error of its own. */
export type BatchOutcome = RecordCrashResult | { outcome: 'refused'; error: unknown };

export interface CrashRecorderDeps {
  groups: Pick<CrashGroupsRepo, 'statesByKeys' | 'tx'>;
  occurrences: Pick<CrashOccurrencesRepo, 'hasMany' | 'addMany'>;
  sessions: Pick<SessionsRepo, 'forCrashMany'>;
  /** Reads a stack with the release's uploaded source maps / R8 mappings (absent: stacks stay raw). */
  symbols?: {
    symbolicate(
      projectId: string,
      appVersion: string | null,
      buildNumber: string | null,
      stack: string,
      message: string,
    ): Promise<SymbolicatedStack>;
  };
  /** The project's own packages, which the group key reads as app frames (absent: none). */
  inAppPackagesOf?: (projectId: string) => Promise<string[]>;
  /** The project's fingerprint rules in order (src/domain/fingerprintRules.ts; absent: none). */
  fingerprintRulesOf?: (projectId: string) => Promise<readonly FingerprintRuleSpec[]>;
  /** A group had a new occurrence: its updatedAt moves (coalesced, services/index.ts). */
  touched?: (projectId: string, groupId: string) => void;
  /** A session's first fatal crash: release health's crash fact (services/releases.ts), committed before the session is flagged. */
  crashedSession?: (projectId: string, sessionId: string, session: CrashingSession) => Promise<void>;
}
