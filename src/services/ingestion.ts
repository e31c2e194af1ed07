import { HttpError } from '../http/errors.ts';
import { isNetworkError } from '../domain/sessionState.ts';
import type { IngestEvent, NetworkRequest } from '../domain/eventRows.ts';
import { ingestLine, ingestLineOf } from '../repos/ingestLines.ts';
import type { CrashPayload } from '../domain/crashGrouping.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../domain/jsonDepth.ts';
import type { SessionsRepo, SessionStart } from '../repos/sessions.ts';
import type { CrashesRepo } from '../repos/crashes.ts';
import { QueueFullError, type InsertBatcher } from '../stores/clickhouse/batcher.ts';
import type { SessionFacts } from './sessionCache.ts';

export interface IngestionDeps {
  sessions: SessionsRepo;
  crashes: CrashesRepo;
  eventsWriter: InsertBatcher;
  networkWriter: InsertBatcher;
  facts: SessionFacts;
  /** Called once per new crash group, after its transaction committed (wakes the outbox worker). */
  onNewCrashGroup?: () => void;
}

const sessionNotFound = () => new HttpError(404, 'Session not found');

/** The write side: each call returns only after what it accepted is committed. */
export function ingestion(d: IngestionDeps) {
  async function requireSession(projectId: string, sessionId: string) {
    if (d.facts.isKnown(projectId, sessionId)) return;
    if (!(await d.sessions.exists(projectId, sessionId))) throw sessionNotFound();
    d.facts.markKnown(projectId, sessionId);
  }

  async function flagNetworkErrors(projectId: string, sessionId: string, calls: { type?: string; statusCode?: number; error?: string | null }[]) {
    if (d.facts.hasNetworkErrors(projectId, sessionId)) return;
    if (!calls.some((c) => (c.type === undefined || c.type === 'network') && isNetworkError(c))) return;
    await d.sessions.markNetworkErrors(projectId, sessionId);
    d.facts.markNetworkErrors(projectId, sessionId);
  }

  /**
   * Writes a request body through its table's group commit, as the bytes that arrived. Should
   * the engine refuse those bytes (JSON that JavaScript reads but ClickHouse does not, such as a
   * key given twice), the body is written once more as this process serialises it.
   */
  async function write(writer: InsertBatcher, projectId: string, raw: Buffer | undefined, body: object, rows: number) {
    try {
      await writer.add(ingestLineOf(projectId, raw, body), rows);
    } catch (err) {
      if (raw === undefined || err instanceof QueueFullError) throw err;
      await writer.add(ingestLine(projectId, Buffer.from(JSON.stringify(body))), rows);
    }
  }

  return {
    async startSession(projectId: string, s: SessionStart) {
      await d.sessions.start(projectId, s);
      d.facts.markKnown(projectId, s.sessionId);
    },

    async endSession(projectId: string, sessionId: string, endedAt: number) {
      const r = await d.sessions.end(projectId, sessionId, endedAt);
      if (r === 'before-start') {
        throw new HttpError(422, 'Validation failed', [{ path: '/endedAt', message: 'must not be before the session startedAt' }]);
      }
    },

    /** `raw`: the body's bytes as received, when they are exactly what was parsed. */
    async events(projectId: string, sessionId: string, events: IngestEvent[], raw?: Buffer): Promise<number> {
      const foreign = events
        .map((e, i) => (e.sessionId === sessionId ? null : { path: `/events/${i}/sessionId`, message: 'must equal the batch sessionId' }))
        .filter((x) => x !== null);
      events.forEach((e, i) => {
        if (e.properties !== undefined && nestsDeeperThan(e.properties, MAX_JSON_DEPTH)) {
          foreign.push({ path: `/events/${i}/properties`, message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` });
        }
      });
      if (foreign.length) throw new HttpError(422, 'Validation failed', foreign.slice(0, 100));
      await requireSession(projectId, sessionId);
      // One insert writes the events and, through its materialized view, their network mirror.
      await write(d.eventsWriter, projectId, raw, { sessionId, events }, events.length);
      await flagNetworkErrors(projectId, sessionId, events);
      return events.length;
    },

    async network(projectId: string, sessionId: string, requests: NetworkRequest[], raw?: Buffer): Promise<number> {
      await requireSession(projectId, sessionId);
      await write(d.networkWriter, projectId, raw, { sessionId, requests }, requests.length);
      await flagNetworkErrors(projectId, sessionId, requests);
      return requests.length;
    },

    async crash(projectId: string, c: CrashPayload) {
      const r = await d.crashes.record(projectId, c);
      if (r.outcome === 'no-session') throw sessionNotFound();
      if (r.outcome === 'recorded' && r.newGroup) d.onNewCrashGroup?.();
    },
  };
}

export type Ingestion = ReturnType<typeof ingestion>;
