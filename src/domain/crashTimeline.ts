import type { Breadcrumb } from './crashContext.ts';

/**
 * The crash page's one timeline before a crash: the report's breadcrumbs (what the SDK kept)
 * and the session's own events (what flightrec stored), in time order, the crash last. Pure.
 */
export interface TimelineEntry {
  /** ms since the epoch */
  at: number;
  source: 'breadcrumb' | 'event' | 'crash';
  /** a breadcrumb's category, an event's type, or "crash" */
  kind: string;
  level: string | null;
  message: string;
  data: Record<string, unknown> | null;
}

export interface SessionEvent {
  at: number;
  type: string;
  data: Record<string, unknown>;
}

const text = (v: unknown) => (v === null || v === undefined ? '' : String(v));

/** An event in one line, as a person scans a trail (bounded: a long URL is cut). */
export function describeEvent(e: SessionEvent): string {
  const d = e.data;
  let s: string;
  switch (e.type) {
    case 'navigate':
      s = d.from ? `${text(d.from)} → ${text(d.to)}` : `→ ${text(d.to)}`;
      break;
    case 'tap':
      s = d.target ? `tap ${text(d.target)}` : `tap at ${text(d.x)}, ${text(d.y)}`;
      break;
    case 'custom':
      s = text(d.name);
      break;
    case 'network':
      s = `${text(d.method)} ${text(d.url)} ${d.error ? text(d.error) : text(d.statusCode)}`.trim();
      break;
    default:
      s = e.type;
  }
  return s.length > 500 ? `${s.slice(0, 500)}…` : s;
}

/** Events after the crash are left out; on equal times breadcrumbs come before events, the crash after both. */
export function crashTimeline(
  breadcrumbs: readonly Breadcrumb[],
  events: readonly SessionEvent[],
  crash: { at: number; message: string; level: string },
): TimelineEntry[] {
  const entries: (TimelineEntry & { order: number })[] = [];
  breadcrumbs.forEach((b, i) => {
    if (b.timestamp > crash.at) return;
    entries.push({
      at: b.timestamp,
      source: 'breadcrumb',
      kind: b.category,
      level: b.level,
      message: b.message,
      data: b.data ?? null,
      order: i,
    });
  });
  events.forEach((e, i) => {
    if (e.at > crash.at) return;
    const failed = e.type === 'network' && (Boolean(e.data.error) || Number(e.data.statusCode) >= 400);
    entries.push({
      at: e.at,
      source: 'event',
      kind: e.type,
      level: failed ? 'error' : null,
      message: describeEvent(e),
      data: e.data,
      order: breadcrumbs.length + i,
    });
  });
  entries.sort((a, b) => a.at - b.at || a.order - b.order);
  const out: TimelineEntry[] = entries.map(({ order: _o, ...e }) => e);
  out.push({ at: crash.at, source: 'crash', kind: 'crash', level: crash.level, message: crash.message, data: null });
  return out;
}
