export const EVENT_TYPES = ['navigate', 'network', 'custom', 'tap'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

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
