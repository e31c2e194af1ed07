// The open session's buffer: what was tracked and not yet sealed into batches. Plain functions
// of the buffer; the client decides when to seal, and what is sampled out.
import { itemBatches, sessionEndBatch, type SealedItem } from './batcher.js';
import type { Batch } from './types.js';

export interface OpenSession {
  id: string;
  seq: number;
  route: string | null;
  events: SealedItem[];
  eventBytes: number;
  requests: SealedItem[];
  requestBytes: number;
  startedAt: number;
  lastActivity: number;
}

/** How the buffer is cut into batches (the client's options, clamped to the contract). */
export interface BatchLimits {
  maxEvents: number;
  maxRequests: number;
  maxBytes: number;
}

export function openSession(id: string, now: number): OpenSession {
  return {
    id,
    seq: 0,
    route: null,
    events: [],
    eventBytes: 0,
    requests: [],
    requestBytes: 0,
    startedAt: now,
    lastActivity: now,
  };
}

/** Empties the event buffer into batches. */
export function sealEvents(s: OpenSession, l: BatchLimits): Batch[] {
  if (s.events.length === 0) return [];
  const out = itemBatches('events', s.id, s.events, l.maxEvents, l.maxBytes);
  s.events = [];
  s.eventBytes = 0;
  return out;
}

/** Empties the request buffer into batches. */
export function sealRequests(s: OpenSession, l: BatchLimits): Batch[] {
  if (s.requests.length === 0) return [];
  const out = itemBatches('network', s.id, s.requests, l.maxRequests, l.maxBytes);
  s.requests = [];
  s.requestBytes = 0;
  return out;
}

/** A buffer reached a batch's bound: it goes now rather than growing until the next tick. */
export function eventsFull(s: OpenSession, l: BatchLimits): boolean {
  return s.events.length >= l.maxEvents || s.eventBytes >= l.maxBytes;
}

export function requestsFull(s: OpenSession, l: BatchLimits): boolean {
  return s.requests.length >= l.maxRequests || s.requestBytes >= l.maxBytes;
}

/**
 * The buffer as it would be sealed now, followed by the session's end at its last activity,
 * without emptying it: what is saved, so that a killed process's next launch sends the buffer
 * and ends the session where it was last seen.
 */
export function provisional(s: OpenSession, l: BatchLimits): Batch[] {
  return [
    ...itemBatches('events', s.id, s.events, l.maxEvents, l.maxBytes),
    ...itemBatches('network', s.id, s.requests, l.maxRequests, l.maxBytes),
    sessionEndBatch(s.id, s.lastActivity),
  ];
}
