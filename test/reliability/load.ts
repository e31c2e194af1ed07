import { randomUUID } from 'node:crypto';
import * as P from '../helpers/payloads.ts';
import { crashGroupKey, crashOccurrenceId, type CrashPayload } from '../../src/domain/crashGrouping.ts';
import { eventId } from '../../src/domain/ids.ts';
import { sendWithRetry, type RetryOptions } from './transport.ts';

/** What the service acknowledged (2xx), per project: the truth the stores are checked against. */
export class Ledger {
  sessions = new Set<string>();
  ended = new Set<string>();
  /** `${sessionId}:${seq}` of every acknowledged event */
  events = new Set<string>();
  /** ids of every acknowledged network log (requests, and the v5 ids of mirrored network events) */
  networkLogs = new Set<string>();
  /** occurrence id → group key, of every acknowledged crash */
  crashes = new Map<string, string>();
  requests = 0;
  /** attempts that were not 2xx: 5xx, 429 and connection errors */
  retried = { server: 0, tooMany: 0, network: 0 };
  /** connection error codes seen (ECONNREFUSED, ECONNRESET, ...), and bodies of 5xx answers */
  networkErrors: Record<string, number> = {};
  serverErrorBodies: unknown[] = [];
}

const STACKS = [0, 1, 2, 3].map((g) =>
  [
    `at fn${g} (a.js:${g}:1)`,
    'at b (b.js:2:2)',
    'at c (c.js:3:3)',
    'at d (d.js:4:4)',
    'at e (e.js:5:5)',
    `at tail${Math.random()} (x.js:9:9)`,
  ].join('\n'),
);

/**
 * SDK-shaped traffic from `clients` concurrent virtual apps until `stop()`: a session, event
 * batches (all four types, network ones mirrored), a network batch, sometimes a crash (from four
 * groups, sometimes sent twice on purpose), usually an end. Every request is retried until 2xx.
 */
export function runLoad(opts: {
  baseUrl: () => string;
  auth: { authorization: string };
  ledger: Ledger;
  clients: number;
  retry?: RetryOptions;
}) {
  const { ledger } = opts;
  let stopping = false;
  const retry: RetryOptions = {
    ...opts.retry,
    onRetry: ({ status, error, body }) => {
      if (status === 'network') {
        ledger.retried.network++;
        ledger.networkErrors[error ?? '?'] = (ledger.networkErrors[error ?? '?'] ?? 0) + 1;
      } else if (status === 429) ledger.retried.tooMany++;
      else {
        ledger.retried.server++;
        if (ledger.serverErrorBodies.length < 20) ledger.serverErrorBodies.push({ status, body });
      }
    },
  };
  const send = async (path: string, body: unknown) => {
    const r = await sendWithRetry(opts.baseUrl, path, body, opts.auth, retry);
    ledger.requests++;
    return r;
  };

  async function oneSession() {
    const start = P.sessionStart({ startedAt: P.T0 + Math.floor(Math.random() * 1e6) });
    const sid = start.sessionId;
    await send('/ingest/session', start);
    ledger.sessions.add(sid);
    let seq = 0;
    for (let b = 0; b < 3; b++) {
      const events = [];
      for (let i = 0; i < 40; i++, seq++) {
        const kind = seq % 4;
        events.push(
          kind === 0
            ? P.navigate(sid, seq)
            : kind === 1
              ? P.networkEvent(sid, seq, seq % 7 === 0 ? 500 : 200)
              : kind === 2
                ? P.customEvent(sid, seq)
                : P.tapEvent(sid, seq),
        );
      }
      await send('/ingest/events', { sessionId: sid, events });
      for (const e of events) {
        ledger.events.add(`${sid}:${e.sequenceNumber}`);
        if (e.type === 'network') ledger.networkLogs.add(eventId(sid, e.sequenceNumber));
      }
    }
    const requests = Array.from({ length: 15 }, (_, i) => P.networkRequest({ timestamp: start.startedAt + 100 + i }));
    await send('/ingest/network', { sessionId: sid, requests });
    for (const r of requests) ledger.networkLogs.add(r.id as string);
    if (Math.random() < 0.5) {
      const c: CrashPayload = P.crash(sid, {
        stackTrace: STACKS[Math.floor(Math.random() * STACKS.length)],
        timestamp: start.startedAt + 5000,
        isFatal: Math.random() < 0.5,
      }) as CrashPayload;
      await send('/ingest/crash', c);
      if (Math.random() < 0.3) await send('/ingest/crash', c); // an SDK re-sending a report it was not sure of
      ledger.crashes.set(crashOccurrenceId(c), crashGroupKey(c.stackTrace, c.message));
    }
    if (Math.random() < 0.7) {
      await send('/ingest/session/end', { sessionId: sid, endedAt: start.startedAt + 60_000 });
      ledger.ended.add(sid);
    }
  }

  const loops = Array.from({ length: opts.clients }, async () => {
    while (!stopping) await oneSession();
  });
  const done = Promise.all(loops);
  return {
    /** Lets every client finish the session it is in (each request still retried until 2xx). */
    async stop() {
      stopping = true;
      await done;
    },
    done,
  };
}

export { randomUUID };
