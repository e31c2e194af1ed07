// Node (and Electron's main process): the process-wide hooks every client of the process shares.
// One listener per process event, whatever the number of clients (and of copies of the SDK: an
// app that loads both the ES module and the CommonJS build), so that "does the app listen too?"
// is asked about the app's listeners only: each client adding its own listener made every
// client see the others' and believe the app handled a crash (the app then never exited).

import { within } from './within.js';

interface NodeProcess {
  pid: number;
  versions?: { node?: string };
  on(ev: string, fn: (...a: never[]) => void): unknown;
  removeListener(ev: string, fn: (...a: never[]) => void): unknown;
  listeners(ev: string): unknown[];
  exit(code?: number): never;
  kill(pid: number, signal: string): unknown;
}

/** Reports a crash; settles once it was sent (or could not be). */
export type CrashSink = (error: unknown) => Promise<void>;
/** Ends the session and sends what is queued; settles when done (or given up). */
export type ExitSink = (why: 'beforeExit' | 'signal') => Promise<void>;

interface Registry {
  crash: Map<CrashSink, number>;
  exit: Map<ExitSink, number>;
  onCrash?: (error: unknown) => void;
  onBeforeExit?: () => void;
  onSignal?: (signal: string) => void;
  dying: boolean;
  signalled: boolean;
}

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
const KEY = typeof Symbol === 'function' ? Symbol.for('flightrec.processHooks') : '__flightrecProcessHooks';

function proc(): NodeProcess | undefined {
  // Typed by Node's own types where they are loaded (the app's tsconfig), by none in the SDK's.
  const p = (globalThis as { process?: unknown }).process;
  return isNodeProcess(p) ? p : undefined;
}

function isNodeProcess(p: unknown): p is NodeProcess {
  const q = p as Partial<NodeProcess> | undefined;
  return !!q?.versions?.node && typeof q.on === 'function' && typeof q.listeners === 'function';
}

function registry(): Registry {
  // Shared by every copy of the SDK in the process (ES module and CommonJS builds): a global.
  const found: Registry | undefined = Reflect.get(globalThis, KEY);
  if (found) return found;
  const r: Registry = { crash: new Map(), exit: new Map(), dying: false, signalled: false };
  Reflect.set(globalThis, KEY, r);
  return r;
}

export { within };

function all<T>(sinks: Map<T, number>, call: (s: T) => Promise<void>): { done: Promise<void>; timeoutMs: number } {
  const runs = [...sinks.keys()].map((s) => {
    try {
      return call(s).catch(() => {});
    } catch {
      return Promise.resolve();
    }
  });
  return { done: Promise.all(runs).then(() => {}), timeoutMs: Math.max(0, ...sinks.values()) };
}

/** Listeners of `ev` that are not the SDK's: the app's (or another library's) own handling. */
function othersListen(p: NodeProcess, ev: string, ours: unknown): boolean {
  return p.listeners(ev).some((l) => l !== ours);
}

/**
 * `uncaughtException` (also where Node's default mode sends an unhandled rejection): every
 * client reports the crash; if nothing but the SDK listens, it then does what Node would have
 * done, after flushing for at most `flushTimeoutMs`: prints the error and exits with code 1.
 * If the app listens too, the app decides. Returns the uninstaller.
 */
export function onNodeCrash(sink: CrashSink, flushTimeoutMs: number): () => void {
  const p = proc();
  if (!p) return () => {};
  const r = registry();
  r.crash.set(sink, flushTimeoutMs);
  if (!r.onCrash) {
    const handler = (error: unknown) => {
      const appDecides = othersListen(p, 'uncaughtException', handler);
      const { done, timeoutMs } = all(r.crash, (s) => s(error));
      if (appDecides || r.dying) return;
      r.dying = true;
      void within(done, timeoutMs).then(() => {
        console.error(error);
        p.exit(1);
      });
    };
    r.onCrash = handler;
    p.on('uncaughtException', handler);
  }
  return () => {
    r.crash.delete(sink);
    if (r.crash.size === 0 && r.onCrash) {
      p.removeListener('uncaughtException', r.onCrash);
      r.onCrash = undefined;
    }
  };
}

/**
 * Flushing on the way out, without changing how the process ends:
 * - `beforeExit` (the event loop ran dry): every client ends its session and sends; the sends
 *   keep the loop alive, and the process then exits as it would have.
 * - SIGTERM / SIGINT: every client ends its session and sends for at most `timeoutMs`; then, if
 *   nothing but the SDK listens to that signal, the SDK's listener is removed and the signal
 *   raised again, so the process dies of it as it would have (exit status 128 + n). If the app
 *   listens too, the app decides (the flush still starts at once). A second signal during the
 *   flush does not wait.
 * Returns the uninstaller.
 */
export function onNodeExit(sink: ExitSink, timeoutMs: number): () => void {
  const p = proc();
  if (!p || typeof p.kill !== 'function') return () => {};
  const r = registry();
  r.exit.set(sink, timeoutMs);
  if (!r.onBeforeExit) {
    const onBeforeExit = () => void all(r.exit, (s) => s('beforeExit'));
    const onSignal = (signal: string) => {
      const appDecides = othersListen(p, signal, onSignal);
      const again = r.signalled;
      r.signalled = true;
      const { done, timeoutMs: wait } = again
        ? { done: Promise.resolve(), timeoutMs: 0 }
        : all(r.exit, (s) => s('signal'));
      if (appDecides) return;
      void within(done, wait).then(() => {
        for (const s of SIGNALS) p.removeListener(s, onSignal);
        p.kill(p.pid, signal);
      });
    };
    r.onBeforeExit = onBeforeExit;
    r.onSignal = onSignal;
    p.on('beforeExit', onBeforeExit);
    for (const s of SIGNALS) p.on(s, onSignal);
  }
  return () => {
    r.exit.delete(sink);
    const { onBeforeExit: before, onSignal: signal } = r;
    if (r.exit.size === 0 && before) {
      p.removeListener('beforeExit', before);
      if (signal) for (const s of SIGNALS) p.removeListener(s, signal);
      r.onBeforeExit = undefined;
      r.onSignal = undefined;
    }
  };
}
