// What a report carries besides its error (the context Sentry users expect): the user, the
// environment, tags, named contexts and the breadcrumbs that led up to it. Bounded everywhere:
// a crash report must stay far below a batch, whatever the app puts in.
import * as clean from './sanitize.js';
import type { Breadcrumb, Level, ReportContext } from './types.js';

export type { Breadcrumb, Level, ReportContext } from './types.js';
export const LEVELS: readonly Level[] = ['fatal', 'error', 'warning', 'info'];

export const MAX_BREADCRUMBS = 100;
const MAX_TAGS = 50;
const MAX_CONTEXTS = 20;
const TAG_KEY = 32;
const TAG_VALUE = 200;
const CRUMB_MESSAGE = 500;
const CRUMB_DATA_BYTES = 1024;
const CONTEXT_BYTES = 8192;
const FINGERPRINT_PARTS = 10;

export function level(v: unknown, fallback: Level): Level {
  return LEVELS.includes(v as Level) ? (v as Level) : fallback;
}

/** A value as JSON no larger than `maxBytes`, or undefined. */
function bounded(v: unknown, maxBytes: number): Record<string, unknown> | undefined {
  try {
    // Throws as soon as the copy would outgrow the budget.
    const safe = clean.jsonSafe(v, [], '', [], { left: maxBytes });
    if (!safe || typeof safe !== 'object' || Array.isArray(safe)) return undefined;
    return clean.utf8Length(JSON.stringify(safe)) <= maxBytes ? (safe as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function breadcrumb(b: unknown, now = Date.now()): Breadcrumb | undefined {
  const o = clean.readable(b);
  const message = clean.str(o.message, CRUMB_MESSAGE) ?? '';
  const category = clean.str(o.category, 64) || 'custom';
  const data = o.data === undefined ? undefined : bounded(o.data, CRUMB_DATA_BYTES);
  const ts = clean.finite(o.timestamp);
  const timestamp = ts !== undefined && ts > 0 ? Math.round(ts) : now;
  return { timestamp, category, message, level: level(o.level, 'info'), ...(data ? { data } : {}) };
}

export function fingerprint(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const parts = v
    .slice(0, FINGERPRINT_PARTS)
    .map((p) => clean.str(typeof p === 'number' ? String(p) : p, 200))
    .filter((p): p is string => !!p);
  return parts.length ? parts : undefined;
}

/** The user, environment, tags, contexts and last breadcrumbs, as set by the app. */
export class Scope {
  environment: string | undefined;
  userId: string | undefined;
  private readonly tags = new Map<string, string>();
  private readonly contexts = new Map<string, Record<string, unknown>>();
  private crumbs: Breadcrumb[] = [];

  setTag(key: unknown, value: unknown): void {
    const k = clean.str(key, TAG_KEY);
    if (!k) return;
    if (value === undefined || value === null) return void this.tags.delete(k);
    const v = clean.str(typeof value === 'number' || typeof value === 'boolean' ? String(value) : value, TAG_VALUE);
    if (v === undefined) return;
    if (!this.tags.has(k) && this.tags.size >= MAX_TAGS) return;
    this.tags.set(k, v);
  }

  setContext(name: unknown, value: unknown): void {
    const n = clean.str(name, 64);
    if (!n) return;
    const v = value === null || value === undefined ? undefined : bounded(value, CONTEXT_BYTES);
    if (!v) return void this.contexts.delete(n);
    if (!this.contexts.has(n) && this.contexts.size >= MAX_CONTEXTS) return;
    this.contexts.set(n, v);
  }

  addBreadcrumb(b: unknown): void {
    const c = breadcrumb(b);
    if (!c) return;
    this.crumbs.push(c);
    if (this.crumbs.length > MAX_BREADCRUMBS) this.crumbs.splice(0, this.crumbs.length - MAX_BREADCRUMBS);
  }

  get breadcrumbs(): readonly Breadcrumb[] {
    return this.crumbs;
  }

  clear(): void {
    this.tags.clear();
    this.contexts.clear();
    this.crumbs = [];
  }

  clearBreadcrumbs(): void {
    this.crumbs = [];
  }

  /** The report fields as they are now (copies: later changes do not reach a queued report). */
  report(lvl: Level, print?: string[]): ReportContext {
    return {
      ...(this.environment ? { environment: this.environment } : {}),
      ...(this.userId ? { userId: this.userId } : {}),
      ...(this.tags.size ? { tags: Object.fromEntries(this.tags) } : {}),
      ...(this.contexts.size ? { context: Object.fromEntries(this.contexts) } : {}),
      ...(this.crumbs.length ? { breadcrumbs: this.crumbs.slice() } : {}),
      level: lvl,
      ...(print ? { fingerprint: print } : {}),
    };
  }
}

/** Report fields from a `beforeSend` hook's crash, checked again. */
export function reportContext(o: Record<string, unknown>, fallback: Level): ReportContext {
  const s = new Scope();
  s.environment = clean.str(o.environment, 64);
  s.userId = clean.str(o.userId, clean.LIMITS.short);
  const tags = clean.readable(o.tags);
  for (const k of Object.keys(tags)) s.setTag(k, tags[k]);
  const ctx = clean.readable(o.context);
  for (const k of Object.keys(ctx)) s.setContext(k, ctx[k]);
  if (Array.isArray(o.breadcrumbs)) for (const b of o.breadcrumbs.slice(-MAX_BREADCRUMBS)) s.addBreadcrumb(b);
  return s.report(level(o.level, fallback), fingerprint(o.fingerprint));
}
