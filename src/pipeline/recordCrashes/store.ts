import { sessionKey } from '../../repos/sessions.ts';
import type { OccurrencePlan } from './plan.ts';
import type { CrashRecorderDeps } from './types.ts';

/**
 * Step `record.store`: the batch's occurrences to ClickHouse in one insert, before Postgres
 * decides: a group never shows in Postgres with none to count, and a failure in between is
 * repaired by the replay (a retried report is the same row). Release health's crash fact of a
 * session's first fatal crash commits here too, before the session is flagged.
 */
export async function storeOccurrences(
  d: Pick<CrashRecorderDeps, 'occurrences' | 'crashedSession'>,
  plans: readonly OccurrencePlan[],
): Promise<void> {
  const facts = new Map<string, Promise<void>>();
  for (const pl of plans) {
    const { c, session, projectId } = pl.x;
    const k = sessionKey(projectId, c.sessionId);
    if (pl.flag && c.isFatal && session.status !== 'crashed' && d.crashedSession && !facts.has(k)) {
      facts.set(k, d.crashedSession(projectId, c.sessionId, session));
    }
  }
  await Promise.all([d.occurrences.addMany(plans.map((p) => p.row)), ...facts.values()]);
}
