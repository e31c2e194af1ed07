// What can be saved of a batch the service refused: a plain function of the batch and the
// answer, so the client only applies its outcome.
import { batchItems, halve, rebuild } from './batcher.js';
import type { Batch } from './types.js';
import { uuidv4 } from './uuid.js';

export interface Salvaged {
  /** Sent in place of the refused batch, in its place in the queue. */
  parts: Batch[];
  /** Items given up. */
  lost: number;
  /** What was done, for the report (none for a plain 413 split). */
  note?: string;
}

/**
 * A 413 is split in halves and sent again; a 422 that names items (`/events/3/x`) loses only
 * those; a session start whose device has a refused field is sent again without it (losing the
 * start would orphan the session). Undefined: nothing can be saved, the batch is dropped.
 */
export function salvage(b: Batch, status: number, answer: string): Salvaged | undefined {
  if (status === 413 && b.items > 1) return { parts: halve(b), lost: 0 };
  if (status !== 422) return undefined;
  const paths = detailPaths(answer);
  if (b.kind === 'events' || b.kind === 'network') {
    const indexes = paths.map((p) => /^\/(?:events|requests)\/(\d+)(?:\/|$)/.exec(p)?.[1]);
    const bad = new Set(indexes.filter((x) => x !== undefined).map(Number));
    const items = batchItems(b);
    if (bad.size === 0 || bad.size >= items.length) return undefined;
    const keep = items.filter((_, i) => !bad.has(i));
    const lost = items.length - keep.length;
    return { parts: rebuild(b, keep), lost, note: `${lost} of ${items.length} items dropped, the rest sent again` };
  }
  if (b.kind === 'session') {
    const fields = paths.map((p) => /^\/device\/(\w+)/.exec(p)?.[1]).filter((x): x is string => x !== undefined);
    const body = JSON.parse(b.body) as { device?: Record<string, unknown> };
    const device = body.device;
    if (!fields.length || !device || !fields.every((f) => f in device)) return undefined;
    for (const f of fields) delete device[f];
    const note = `session start sent again without device ${fields.join(', ')}`;
    return { parts: [{ ...b, id: uuidv4(), body: JSON.stringify(body) }], lost: 0, note };
  }
  return undefined;
}

/** The JSON pointers of a 422's details. */
function detailPaths(text: string): string[] {
  try {
    const j = JSON.parse(text) as { details?: { path?: unknown }[] };
    if (!Array.isArray(j.details)) return [];
    return j.details.map((d) => d?.path).filter((p): p is string => typeof p === 'string');
  } catch {
    return [];
  }
}
