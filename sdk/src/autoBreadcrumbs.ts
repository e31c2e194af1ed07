// Automatic breadcrumbs: the console, clicks, navigations (the History API included) and
// requests (fetch and XMLHttpRequest) become breadcrumbs of the client's ring, so a crash
// report shows what led up to it. Opt-in per part; every patch is undone by the returned
// function and never changes what the app sees (a recording that fails is skipped).
import { instrumentFetch, instrumentXhr, type RecordedRequest } from './fetch.js';
import type { Breadcrumb, Level } from './scope.js';
import { jsonSafe, truncate } from './sanitize.js';

export interface AutoBreadcrumbOptions {
  /** console.debug/log/info/warn/error. Default true. */
  console?: boolean;
  /** Clicks anywhere in the document (browser). Default true. */
  clicks?: boolean;
  /** history.pushState / replaceState, popstate and hashchange (browser). Default true. */
  navigation?: boolean;
  /** The global fetch and XMLHttpRequest (the SDK's own calls are left out). Default true. */
  requests?: boolean;
}

export interface BreadcrumbSink {
  addBreadcrumb(b: Omit<Breadcrumb, 'timestamp'> & { timestamp?: number }): void;
  /** Requests to the service itself are not breadcrumbs. */
  isOwnUrl(url: string): boolean;
}

type Fn = (...a: unknown[]) => unknown;
type Add = (b: Omit<Breadcrumb, 'timestamp'>) => void;
type ConsoleMethod = 'debug' | 'log' | 'info' | 'warn' | 'error';
type Patchable<K extends string> = Record<K, Fn>;
type HistoryMethod = 'pushState' | 'replaceState';
/** The globals this module patches: each may be missing (Node has no document, React Native no history). */
const g: Partial<
  Pick<
    typeof globalThis,
    'document' | 'history' | 'location' | 'fetch' | 'addEventListener' | 'removeEventListener'
  > & {
    console: Patchable<ConsoleMethod>;
  }
> = globalThis;

const CONSOLE_LEVELS: Record<ConsoleMethod, Level> = {
  debug: 'info',
  log: 'info',
  info: 'info',
  warn: 'warning',
  error: 'error',
};

export function installAutoBreadcrumbs(sink: BreadcrumbSink, opts: AutoBreadcrumbOptions = {}): () => void {
  const undo: (() => void)[] = [];
  const add = (b: Omit<Breadcrumb, 'timestamp'>) => {
    try {
      sink.addBreadcrumb(b);
    } catch {
      // a breadcrumb is never worth an app error
    }
  };
  try {
    const { console: c, document: doc, history: h, location: loc } = g;
    if (opts.console !== false && c) undo.push(patchConsole(c, add));
    if (opts.clicks !== false && doc) undo.push(watchClicks(doc, add));
    if (opts.navigation !== false && h && loc) undo.push(watchNavigation(h, loc, add));
    if (opts.requests !== false) undo.push(watchRequests(sink, add));
  } catch {
    // a hostile global: what was installed stays, undone below
  }
  return () => {
    for (const u of undo.splice(0).reverse()) {
      try {
        u();
      } catch {
        // nothing to undo
      }
    }
  };
}

function patchConsole(c: Patchable<ConsoleMethod>, add: Add): () => void {
  const originals: [ConsoleMethod, Fn][] = [];
  let inside = false;
  for (const name of ['debug', 'log', 'info', 'warn', 'error'] as const) {
    const orig = c[name];
    if (typeof orig !== 'function') continue;
    originals.push([name, orig]);
    const level = CONSOLE_LEVELS[name];
    c[name] = function (this: unknown, ...args: unknown[]) {
      // A breadcrumb sink that logs must not recurse.
      if (!inside) {
        inside = true;
        try {
          const message = truncate(args.map(text).join(' '), 500);
          const data = { logger: 'console', method: name };
          add({ category: 'console', level, message, data });
        } finally {
          inside = false;
        }
      }
      return orig.apply(this, args);
    };
  }
  const patched = new Map(originals.map(([n]) => [n, c[n]]));
  return () => {
    // Only our own patch: someone may have wrapped ours since.
    for (const [n, orig] of originals) if (c[n] === patched.get(n)) c[n] = orig;
  };
}

function text(a: unknown): string {
  if (typeof a === 'string') return a;
  try {
    if (a instanceof Error) return `${a.name}: ${a.message}`;
    return JSON.stringify(jsonSafe(a, [], '', [], { left: 1024 })) ?? String(a);
  } catch {
    return '[unserialisable]';
  }
}

/** `button#buy.primary "Buy now"`: how Sentry describes a clicked element. */
function describeElement(el: unknown): string {
  const e = el as {
    tagName?: string;
    id?: string;
    className?: unknown;
    textContent?: string | null;
    getAttribute?(n: string): string | null;
  } | null;
  if (!e?.tagName) return 'unknown';
  let s = e.tagName.toLowerCase();
  if (e.id) s += `#${e.id}`;
  const classes = typeof e.className === 'string' ? e.className.trim() : '';
  if (classes) s += `.${classes.split(/\s+/).slice(0, 3).join('.')}`;
  const label = e.getAttribute?.('aria-label') ?? (e.textContent ?? '').trim().slice(0, 40);
  if (label) s += ` "${label.replace(/\s+/g, ' ')}"`;
  return truncate(s, 200);
}

function watchClicks(doc: Pick<Document, 'addEventListener' | 'removeEventListener'>, add: Add): () => void {
  const on = (e: unknown) => {
    add({ category: 'ui.click', level: 'info', message: describeElement((e as { target?: unknown }).target) });
  };
  doc.addEventListener('click', on, { capture: true, passive: true });
  return () => doc.removeEventListener('click', on, { capture: true });
}

function watchNavigation(h: Pick<History, HistoryMethod>, loc: { href: string }, add: Add): () => void {
  let from = loc.href;
  const moved = () => {
    const to = loc.href;
    if (to === from) return;
    add({ category: 'navigation', level: 'info', message: to, data: { from, to } });
    from = to;
  };
  const originals: [HistoryMethod, History['pushState']][] = [];
  for (const name of ['pushState', 'replaceState'] as const) {
    const orig = h[name];
    if (typeof orig !== 'function') continue;
    originals.push([name, orig]);
    h[name] = function (this: History, ...args: Parameters<History['pushState']>) {
      const r = orig.apply(this, args);
      try {
        moved();
      } catch {
        // as above
      }
      return r;
    };
  }
  const patched = new Map(originals.map(([n]) => [n, h[n]]));
  g.addEventListener?.('popstate', moved);
  g.addEventListener?.('hashchange', moved);
  return () => {
    for (const [n, orig] of originals) if (h[n] === patched.get(n)) h[n] = orig;
    g.removeEventListener?.('popstate', moved);
    g.removeEventListener?.('hashchange', moved);
  };
}

function watchRequests(sink: BreadcrumbSink, add: Add): () => void {
  const crumb = (category: 'fetch' | 'xhr') => (r: RecordedRequest) =>
    add({
      category,
      level: r.error || (r.statusCode ?? 0) >= 500 ? 'error' : (r.statusCode ?? 0) >= 400 ? 'warning' : 'info',
      message: `${r.method} ${r.url}${r.statusCode ? ` [${r.statusCode}]` : ''}${r.error ? ` ${r.error}` : ''}`,
      data: {
        method: r.method,
        url: r.url,
        ...(r.statusCode ? { statusCode: r.statusCode } : {}),
        duration: r.duration,
      },
    });
  const undo: (() => void)[] = [];
  const orig = g.fetch;
  if (typeof orig === 'function') {
    const wrapped = instrumentFetch((input, init) => orig.call(globalThis, input, init), {
      ignore: (u) => sink.isOwnUrl(u),
      record: crumb('fetch'),
    });
    g.fetch = wrapped;
    undo.push(() => {
      if (g.fetch === wrapped) g.fetch = orig;
    });
  }
  undo.push(instrumentXhr({ ignore: (u) => sink.isOwnUrl(u), record: crumb('xhr') }));
  return () => {
    for (const u of undo) u();
  };
}
