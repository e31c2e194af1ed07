import { MAX_DETAILS, NotFoundError, ValidationError } from '../domain/errors.ts';
import { isNetworkError } from '../domain/sessionState.ts';
import type { IngestEvent, NetworkRequest } from '../domain/eventRows.ts';
import type { CrashReport } from '../pipeline/crashPipeline.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../lib/jsonDepth.ts';
import type { SessionsRepo } from '../repos/sessions.ts';
import type { SessionStart } from '../domain/session.ts';
import type { CrashRecorder } from '../pipeline/recordCrashes/index.ts';
import type { IngestRepo } from '../repos/ingest.ts';
import type { SessionFacts } from './sessionCache.ts';
import type { SessionTouches } from './sessionTouches.ts';

export interface IngestionDeps {
  sessions: SessionsRepo;
  crashes: Pick<CrashRecorder, 'record'>;
  /** The group commit of /ingest/events and /ingest/network bodies. */
  ingest: IngestRepo;
  facts: SessionFacts;
  /** Moves a session's updatedAt after its events changed its eventCount (coalesced). */
  touches?: SessionTouches;
  /** Release health's fact of a session start (a fatal crash's is the crash workflow's). */
  releases?: { started(projectId: string, s: SessionStart, created: boolean): Promise<void> };
  /**
   * With the spool: a crash report is appended here (durable once it resolves) and recorded by
   * the crash pipeline's loader; without, it is recorded inside the request.
   */
  crashSpool?: { append(projectId: string, crash: CrashReport): Promise<void> };
  /** Called once per new crash group, after its transaction committed (wakes the outbox worker). */
  onNewCrashGroup?: () => void;
}

const sessionNotFound = () => new NotFoundError('Session not found');

/** The write side: each call returns only after what it accepted is committed. */
export function ingestion(d: IngestionDeps) {
  async function requireSession(projectId: string, sessionId: string) {
    if (d.facts.isKnown(projectId, sessionId)) return;
    if (!(await d.sessions.exists(projectId, sessionId))) throw sessionNotFound();
    d.facts.markKnown(projectId, sessionId);
  }

  /** The session, when this body is the first this process sees of its network errors. */
  function raisesFlag(
    projectId: string,
    sessionId: string,
    calls: { type?: string; statusCode?: number; error?: string | null }[],
  ): string | undefined {
    if (d.facts.hasNetworkErrors(projectId, sessionId)) return undefined;
    return calls.some((c) => (c.type === undefined || c.type === 'network') && isNetworkError(c))
      ? sessionId
      : undefined;
  }

  /**
   * Stores a body and, when it raises the session's network-error flag, the flag: through the
   * spool, the line carries it and the loader sets it once the line is stored; without, here.
   */
  async function store(
    projectId: string,
    sessionId: string,
    raw: Buffer | undefined,
    body: object,
    rows: number,
    calls: Parameters<typeof raisesFlag>[2],
  ) {
    const flagged = raisesFlag(projectId, sessionId, calls);
    await d.ingest.add(projectId, raw, body, rows, flagged);
    if (flagged === undefined) return;
    if (!d.ingest.flagsOnLoad) await d.sessions.markNetworkErrors([{ projectId, sessionId }]);
    d.facts.markNetworkErrors(projectId, sessionId);
  }

  return {
    async startSession(projectId: string, s: SessionStart) {
      const created = await d.sessions.start(projectId, s);
      d.facts.markKnown(projectId, s.sessionId);
      await d.releases?.started(projectId, s, created);
    },

    async endSession(projectId: string, sessionId: string, endedAt: number) {
      const r = await d.sessions.end(projectId, sessionId, endedAt);
      if (r === 'before-start') {
        throw new ValidationError([{ path: '/endedAt', message: 'must not be before the session startedAt' }]);
      }
    },

    /** `raw`: the body's bytes as received, when they are exactly what was parsed. */
    async events(projectId: string, sessionId: string, events: IngestEvent[], raw?: Buffer): Promise<number> {
      const foreign = events
        .map((e, i) =>
          e.sessionId === sessionId
            ? null
            : { path: `/events/${i}/sessionId`, message: 'must equal the batch sessionId' },
        )
        .filter((x) => x !== null);
      events.forEach((e, i) => {
        if (e.properties !== undefined && nestsDeeperThan(e.properties, MAX_JSON_DEPTH)) {
          foreign.push({
            path: `/events/${i}/properties`,
            message: `must not nest deeper than ${MAX_JSON_DEPTH} levels`,
          });
        }
      });
      if (foreign.length) throw new ValidationError(foreign.slice(0, MAX_DETAILS));
      await requireSession(projectId, sessionId);
      // One insert writes the events and, through the ingest table's views, their network mirror.
      await store(projectId, sessionId, raw, { sessionId, events }, events.length, events);
      d.touches?.mark(projectId, sessionId);
      return events.length;
    },

    async network(projectId: string, sessionId: string, requests: NetworkRequest[], raw?: Buffer): Promise<number> {
      await requireSession(projectId, sessionId);
      await store(projectId, sessionId, raw, { sessionId, requests }, requests.length, requests);
      return requests.length;
    },

    async crash(projectId: string, c: CrashReport) {
      if (d.crashSpool) {
        // The request checks what it can answer for (the session, cached); the loader records.
        await requireSession(projectId, c.sessionId);
        await d.crashSpool.append(projectId, c);
        return;
      }
      const r = await d.crashes.record(projectId, c);
      if (r.outcome === 'no-session') throw sessionNotFound();
      // A regression's alert job is in the outbox too: wake the worker for it as well.
      if (r.outcome === 'recorded' && (r.newGroup || r.regressed)) d.onNewCrashGroup?.();
    },
  };
}

export type Ingestion = ReturnType<typeof ingestion>;
