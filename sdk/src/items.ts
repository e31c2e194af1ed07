// What the app tracks, checked and serialised into what is buffered: events, network requests
// and crash reports, through the app's `beforeSend`. Plain functions; the client reports the
// issues and buffers the result.
import { sealItem, type SealedItem } from './batcher.js';
import * as clean from './sanitize.js';
import { type Level, reportContext } from './scope.js';
import type { CrashReport, NetworkRequest, Outgoing, SdkEvent } from './types.js';

/** Room for the batch envelope when checking that one item fits in a batch. */
const ENVELOPE_BYTES = 128;

export interface Checks {
  scrub: (url: string) => string;
  maxBytes: number;
  /** The app's `beforeSend`, run so that a throw drops the item; undefined when there is none. */
  filter: ((item: Outgoing) => Outgoing | null | undefined) | undefined;
}

/** Kept (serialised), left out by `beforeSend`, or invalid (the reasons are in `issues`). */
export type Checked<T> = { kept: T; item: SealedItem } | 'filtered' | 'invalid';

/** An item larger than a whole batch can never be sent: it is dropped alone. */
function fits(value: object, what: string, maxBytes: number, issues: clean.Issues): SealedItem | undefined {
  const item = sealItem(value);
  if (item.bytes + ENVELOPE_BYTES <= maxBytes) return item;
  issues.push(`${what} of ${item.bytes} bytes is over the ${maxBytes}-byte batch limit`);
  return undefined;
}

/** `raw`: the app's values (`ts` its timestamp); the event gets the session's next sequence number. */
export function checkEvent(
  raw: Record<string, unknown>,
  s: { id: string; seq: number },
  c: Checks,
  issues: clean.Issues,
): Checked<SdkEvent> {
  const fields = clean.eventFields(raw, c.scrub, issues, c.maxBytes);
  const stamp = (f: clean.EventFields, ts: unknown) =>
    ({ ...f, sessionId: s.id, timestamp: clean.timestamp(ts), sequenceNumber: s.seq }) as SdkEvent;
  let ev = fields && stamp(fields, raw.ts);
  if (ev && c.filter) {
    const out = c.filter({ kind: 'event', event: ev });
    if (out?.kind !== 'event') return 'filtered';
    // What the hook returned is checked again, but not scrubbed again: it had the last word.
    const again = clean.eventFields(clean.readable(out.event, issues, ''), (u) => u, issues, c.maxBytes);
    ev = again && stamp(again, out.event.timestamp);
  }
  const item = ev && fits(ev, `${ev.type} event`, c.maxBytes, issues);
  return ev && item ? { kept: ev, item } : 'invalid';
}

export function checkRequest(raw: object, id: string, c: Checks, issues: clean.Issues): Checked<NetworkRequest> {
  let req = clean.networkRequest(clean.readable(raw), id, c.scrub, issues);
  if (req && c.filter) {
    const out = c.filter({ kind: 'request', request: req });
    if (out?.kind !== 'request') return 'filtered';
    req = clean.networkRequest(clean.readable(out.request), req.id, (u) => u, issues);
  }
  const item = req && fits(req, 'network request', c.maxBytes, issues);
  return req && item ? { kept: req, item } : 'invalid';
}

/** A crash report as `beforeSend` leaves it (its session cannot be changed); undefined: left out. */
export function checkCrash(report: CrashReport, lvl: Level, c: Checks): CrashReport | undefined {
  if (!c.filter) return report;
  const out = c.filter({ kind: 'crash', crash: report });
  if (out?.kind !== 'crash') return undefined;
  const o = clean.readable(out.crash);
  const timestamp = clean.timestamp(o.timestamp);
  return { sessionId: report.sessionId, ...clean.crash(o), timestamp, ...reportContext(o, lvl) };
}
