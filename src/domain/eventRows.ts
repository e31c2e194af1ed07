import { eventId } from './ids.ts';

export type EventType = 'navigate' | 'network' | 'custom' | 'tap';

export interface IngestEvent {
  type: EventType;
  sessionId: string;
  timestamp: number;
  sequenceNumber: number;
  from?: string | null;
  to?: string;
  method?: string;
  url?: string;
  statusCode?: number;
  duration?: number;
  error?: string | null;
  name?: string;
  properties?: Record<string, unknown>;
  x?: number;
  y?: number;
  target?: string;
}

export interface NetworkRequest {
  id: string;
  method: string;
  url: string;
  statusCode?: number;
  duration: number;
  requestSize?: number;
  responseSize?: number;
  error?: string | null;
  timestamp: number;
}

export interface EventRow {
  project_id: string;
  session_id: string;
  sequence_number: number;
  id: string;
  type: EventType;
  timestamp: number;
  /**
   * The export `data` object. It goes to ClickHouse as a nested JSON object and is stored in the
   * String column as its JSON text (INSERT_SETTINGS reads objects as strings): one serialisation
   * per event instead of two, and no escaped JSON inside JSON (measured, docs/bench.md).
   */
  data: Record<string, unknown>;
}

export interface NetworkLogRow {
  project_id: string;
  timestamp: number;
  id: string;
  session_id: string;
  method: string;
  url: string;
  status_code: number | null;
  duration: number;
  request_size: number | null;
  response_size: number | null;
  error: string | null;
}

/** The export `data` object of an event (docs/decisions.md); absent values are null. */
export function eventData(e: IngestEvent): Record<string, unknown> {
  switch (e.type) {
    case 'navigate':
      return { from: e.from ?? null, to: e.to ?? null };
    case 'custom':
      return { name: e.name ?? null, properties: e.properties ?? null };
    case 'network':
      return { method: e.method ?? null, url: e.url ?? null, statusCode: e.statusCode ?? null, duration: e.duration ?? null, error: e.error ?? null };
    case 'tap':
      return { x: e.x ?? null, y: e.y ?? null, target: e.target ?? null };
  }
}

export function toEventRow(projectId: string, e: IngestEvent): EventRow {
  return {
    project_id: projectId,
    session_id: e.sessionId,
    sequence_number: e.sequenceNumber,
    id: eventId(e.sessionId, e.sequenceNumber),
    type: e.type,
    timestamp: e.timestamp,
    data: eventData(e),
  };
}

/** A network event mirrored into the network logs, with the event's own id. */
export function mirroredNetworkRow(projectId: string, row: EventRow, e: IngestEvent): NetworkLogRow {
  return {
    project_id: projectId,
    timestamp: e.timestamp,
    id: row.id,
    session_id: e.sessionId,
    method: e.method ?? '',
    url: e.url ?? '',
    status_code: e.statusCode ?? null,
    duration: e.duration ?? 0,
    request_size: null,
    response_size: null,
    error: e.error ?? null,
  };
}

export function toNetworkLogRow(projectId: string, sessionId: string, r: NetworkRequest): NetworkLogRow {
  return {
    project_id: projectId,
    timestamp: r.timestamp,
    id: r.id,
    session_id: sessionId,
    method: r.method,
    url: r.url,
    status_code: r.statusCode ?? null,
    duration: r.duration,
    request_size: r.requestSize ?? null,
    response_size: r.responseSize ?? null,
    error: r.error ?? null,
  };
}
