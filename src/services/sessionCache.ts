/**
 * Facts about a session that never change once true, so the ingestion hot path can skip
 * Postgres: the session exists in its project, and its hasNetworkErrors flag is set.
 * Bounded; the oldest entries go first.
 */
export class SessionFacts {
  private known = new Set<string>();
  private flagged = new Set<string>();

  constructor(private readonly max = 200_000) {}

  private static key(projectId: string, sessionId: string) {
    return projectId + ':' + sessionId;
  }

  private static add(set: Set<string>, key: string, max: number) {
    if (set.has(key)) return;
    if (set.size >= max) {
      const oldest = set.values().next();
      if (!oldest.done) set.delete(oldest.value);
    }
    set.add(key);
  }

  isKnown(projectId: string, sessionId: string) {
    return this.known.has(SessionFacts.key(projectId, sessionId));
  }
  markKnown(projectId: string, sessionId: string) {
    SessionFacts.add(this.known, SessionFacts.key(projectId, sessionId), this.max);
  }
  hasNetworkErrors(projectId: string, sessionId: string) {
    return this.flagged.has(SessionFacts.key(projectId, sessionId));
  }
  markNetworkErrors(projectId: string, sessionId: string) {
    SessionFacts.add(this.flagged, SessionFacts.key(projectId, sessionId), this.max);
  }
}
