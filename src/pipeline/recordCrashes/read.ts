import { crashGroupKey, crashOccurrenceId, legacyGroupKey } from '../../domain/crashGrouping.ts';
import { boundCrashContext } from '../../domain/crashContext.ts';
import {
  fingerprintInput,
  fingerprintKey,
  firstMatchingRule,
  type FingerprintRuleSpec,
} from '../../domain/fingerprintRules.ts';
import { sessionKey, type CrashingSession } from '../../repos/sessions.ts';
import { classify } from '../errors.ts';
import type { Keyed, ReadReport } from './plan.ts';
import type { BatchOutcome, CrashInput, CrashRecorderDeps } from './types.ts';

type Reading = Pick<ReadReport, 'sym' | 'at' | 'raw'>;

/**
 * Step `record.read`: each report on its own: its session, its bounded context, its stack as the
 * release's artifacts read it and the keys of that stack. A report whose session is gone, or
 * with an error of its own, gets its outcome in `out` and is left out; an error of the stores
 * fails the step (thrown, the batch tried again).
 */
export async function readReports(
  d: Pick<CrashRecorderDeps, 'sessions' | 'symbols' | 'inAppPackagesOf' | 'fingerprintRulesOf'>,
  items: readonly CrashInput[],
  out: BatchOutcome[],
): Promise<ReadReport[]> {
  const sessions = await d.sessions.forCrashMany(
    items.map((x) => ({ projectId: x.projectId, sessionId: x.crash.sessionId })),
  );
  const projects = [...new Set(items.map((x) => x.projectId))];
  const perProject = new Map(
    await Promise.all(
      projects.map(
        async (p) =>
          [
            p,
            {
              inAppPackages: (await d.inAppPackagesOf?.(p)) ?? [],
              rules: (await d.fingerprintRulesOf?.(p)) ?? [],
            },
          ] as const,
      ),
    ),
  );

  const readStack = async (
    projectId: string,
    session: CrashingSession,
    c: CrashInput['crash'],
    inAppPackages: string[],
    rules: readonly FingerprintRuleSpec[],
  ): Promise<Reading> => {
    // Grouped on the stack as the release's artifacts read it (docs/decisions.md, "One bug,
    // one group: grouping on parsed frames"); the raw stack is kept as sent.
    const sym = d.symbols
      ? await d.symbols.symbolicate(projectId, session.app_version, session.app_build_number, c.stackTrace, c.message)
      : { stack: c.stackTrace, message: c.message, mapped: 0 };
    const keyOpts = { inAppPackages, fingerprint: c.fingerprint };
    /** The key of a stack: the project's first matching fingerprint rule's, else the default key. */
    const keyOf = (stack: string, message: string): Keyed => {
      const base = crashGroupKey(stack, message, keyOpts);
      const rule = rules.length ? firstMatchingRule(rules, fingerprintInput(stack, message, inAppPackages)) : undefined;
      const key = rule ? fingerprintKey(rule.fingerprint, base) : base;
      // A project's rule names its group itself: the previous rule's key is not consulted.
      return { base, key, legacy: key === base ? legacyGroupKey(stack) : key };
    };
    return {
      sym,
      at: keyOf(sym.stack, sym.message),
      raw: sym.mapped > 0 ? keyOf(c.stackTrace, c.message) : null,
    };
  };

  const read: ReadReport[] = [];
  let storeError: unknown;
  const readings = new Map<string, Promise<Reading>>();
  const readOne = async ({ projectId, crash: c }: CrashInput, i: number) => {
    try {
      const session = sessions.get(sessionKey(projectId, c.sessionId));
      if (!session) {
        out[i] = { outcome: 'no-session' };
        return;
      }
      const { inAppPackages, rules } = perProject.get(projectId) ?? { inAppPackages: [], rules: [] };
      // Bounded, never refused (docs/decisions.md, "Crash context"). The occurrence's id stays
      // the hash of the contract's fields: the context is what the SDK attached, not what
      // happened, and a retry that re-attaches it differently is still the same occurrence.
      const cx = boundCrashContext(c, c.isFatal);
      // A storm is one stack many times over: a batch reads each distinct (release, stack,
      // message, fingerprint) once. Its artifacts, packages and rules are fixed for the batch, so
      // every copy would read the same.
      const readKey = JSON.stringify([
        projectId,
        session.app_version,
        session.app_build_number,
        c.stackTrace,
        c.message,
        c.fingerprint ?? null,
      ]);
      let reading = readings.get(readKey);
      if (!reading) {
        reading = readStack(projectId, session, c, inAppPackages, rules);
        readings.set(readKey, reading);
      }
      const { sym, at, raw } = await reading;
      read.push({ i, projectId, c, session, cx, sym, occurrenceId: crashOccurrenceId(c), at, raw });
    } catch (error) {
      if (classify(error).kind === 'retryable') storeError ??= error;
      else out[i] = { outcome: 'refused', error };
    }
  };
  // One report of each release first: its artifacts are read and cached once, and the rest of
  // the batch finds them cached instead of each reading them at once.
  const release = (x: CrashInput) => {
    const s = sessions.get(sessionKey(x.projectId, x.crash.sessionId));
    return `${x.projectId}:${s?.app_version ?? ''}:${s?.app_build_number ?? ''}`;
  };
  const firstOf = new Map<string, number>();
  items.forEach((x, i) => {
    if (!firstOf.has(release(x))) firstOf.set(release(x), i);
  });
  const leaders = new Set(firstOf.values());
  await Promise.all([...leaders].map((i) => readOne(items[i] as CrashInput, i)));
  await Promise.all(items.map((x, i) => (leaders.has(i) ? undefined : readOne(x, i))));
  if (storeError !== undefined) throw storeError;
  return read.sort((a, b) => a.i - b.i);
}
