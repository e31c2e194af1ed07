import { BoundedMap } from '../lib/boundedMap.ts';

/**
 * Facts about a session that never change once true, so the ingestion hot path can skip
 * Postgres: the session exists in its project, and its hasNetworkErrors flag is set.
 * Bounded; the oldest entries go first.
 */
export class SessionFacts {
  private readonly known: BoundedMap<string, true>;
  private readonly flagged: BoundedMap<string, true>;

  constructor(max = 200_000) {
    this.known = new BoundedMap(max);
    this.flagged = new BoundedMap(max);
  }

  private static key(projectId: string, sessionId: string) {
    return `${projectId}:${sessionId}`;
  }

  isKnown(projectId: string, sessionId: string) {
    return this.known.has(SessionFacts.key(projectId, sessionId));
  }
  markKnown(projectId: string, sessionId: string) {
    this.known.set(SessionFacts.key(projectId, sessionId), true);
  }
  hasNetworkErrors(projectId: string, sessionId: string) {
    return this.flagged.has(SessionFacts.key(projectId, sessionId));
  }
  markNetworkErrors(projectId: string, sessionId: string) {
    this.flagged.set(SessionFacts.key(projectId, sessionId), true);
  }
}
