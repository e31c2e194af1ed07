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
