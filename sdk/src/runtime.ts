// What differs per runtime (browser, React Native, Node/Electron main): catching crashes the app
// did not catch, noticing foreground/background, and filling in device fields. Everything is
// found by feature detection on globalThis, so the SDK imports no platform module.
import { within } from './within.js';
import { platformOf } from './sanitize.js';
import type { Device } from './types.js';

type Handler = (error: unknown, isFatal?: boolean) => void;
interface ErrorUtilsLike {
  getGlobalHandler?(): Handler | undefined;
  setGlobalHandler(h: Handler): void;
}
interface NodeProcess {
  versions?: { node?: string };
  platform?: string;
  on(ev: string, fn: (...a: unknown[]) => void): unknown;
  removeListener(ev: string, fn: (...a: unknown[]) => void): unknown;
  listenerCount(ev: string): number;
  exit(code?: number): never;
  getSystemVersion?(): string;
}
interface EventTargetish {
  addEventListener(type: string, fn: (e: never) => void, opts?: unknown): void;
  removeEventListener(type: string, fn: (e: never) => void, opts?: unknown): void;
}

const g = globalThis as {
  ErrorUtils?: ErrorUtilsLike;
  process?: NodeProcess;
  document?: EventTargetish & { visibilityState?: string };
  navigator?: {
    product?: string;
    language?: string;
    userAgent?: string;
    maxTouchPoints?: number;
    userAgentData?: { platform?: string };
    connection?: { type?: string };
  };
  screen?: { width?: number; height?: number };
} & Partial<EventTargetish>;

export type Runtime = 'react-native' | 'browser' | 'node' | 'unknown';

export function runtime(): Runtime {
  if (g.navigator?.product === 'ReactNative' || g.ErrorUtils) return 'react-native';
  if (g.document && typeof g.addEventListener === 'function') return 'browser';
  if (g.process?.versions?.node && typeof g.process.on === 'function') return 'node';
  return 'unknown';
}

export { within };

export type CrashSink = (error: unknown, isFatal: boolean) => Promise<void>;

/**
 * Reports what the app did not catch, then lets the platform do what it would have done:
 * - React Native: wraps `ErrorUtils`' global handler; a fatal error is flushed (up to
 *   `flushTimeoutMs`) before the previous handler runs, which then crashes or shows the red box.
 * - Browser: `error` and `unhandledrejection` on window, as non-fatal unhandled crashes: the
 *   page lives on. Nothing is prevented, so the console still shows them.
 * - Node / Electron main: `uncaughtException` (which is also where an unhandled rejection ends
 *   up in Node's default mode) as a fatal crash; if the app has no handler of its own, the SDK
 *   then does what Node would have: prints the error and exits with code 1, after flushing for
 *   at most `flushTimeoutMs`. One listener per process for all clients (`processHooks.ts`).
 * Returns the uninstaller.
 */
export function installCrashHandlers(
  sink: CrashSink,
  flushTimeoutMs: number,
  /** Node's hook (`onNodeCrash` of `@flightrec/sdk/node`): left out of browser and RN bundles. */
  nodeCrash?: (sink: (error: unknown) => Promise<void>, flushTimeoutMs: number) => () => void,
): () => void {
  const rt = runtime();
  if (rt === 'react-native' && g.ErrorUtils?.setGlobalHandler) {
    const eu = g.ErrorUtils;
    const previous = eu.getGlobalHandler?.();
    const handler: Handler = (error, isFatal) => {
      const sent = sink(error, isFatal === true);
      if (isFatal) void within(sent, flushTimeoutMs).then(() => previous?.(error, isFatal));
      else previous?.(error, isFatal);
    };
    eu.setGlobalHandler(handler);
    return () => {
      if (!eu.getGlobalHandler || eu.getGlobalHandler() === handler) eu.setGlobalHandler(previous ?? (() => {}));
    };
  }
  if (rt === 'browser') {
    const onError = (e: { error?: unknown; message?: string }) =>
      void sink(e.error ?? e.message ?? 'Script error', false);
    const onRejection = (e: { reason?: unknown }) => void sink(e.reason, false);
    g.addEventListener?.('error', onError);
    g.addEventListener?.('unhandledrejection', onRejection);
    return () => {
      g.removeEventListener?.('error', onError);
      g.removeEventListener?.('unhandledrejection', onRejection);
    };
  }
  if (rt === 'node' && nodeCrash) return nodeCrash((e) => sink(e, true), flushTimeoutMs);
  return () => {};
}

/** React Native's AppState, as far as the SDK uses it. */
export interface AppStateLike {
  currentState?: string;
  // biome-ignore lint/suspicious/noConfusingVoidType: React Native before 0.65 returns nothing here (a function returning void must fit)
  addEventListener(type: 'change', fn: (state: string) => void): { remove(): void } | void;
}

export interface LifecycleHooks {
  /** `exit`: the page is being left (pagehide); it may not run another line after this. */
  background(exit?: boolean): void;
  foreground(): void;
}

/**
 * Calls `background` when the app leaves the screen (browser: `visibilitychange` to hidden, and
 * `pagehide` as an exit; React Native: AppState `background`) and `foreground` when it is back.
 */
export function watchLifecycle(h: LifecycleHooks, appState?: AppStateLike): () => void {
  if (appState) {
    const sub = appState.addEventListener('change', (s) => {
      if (s === 'active') h.foreground();
      else if (s === 'background') h.background();
    });
    return () => sub?.remove();
  }
  const doc = g.document;
  if (runtime() !== 'browser' || !doc) return () => {};
  const onVisibility = () => (doc.visibilityState === 'hidden' ? h.background() : h.foreground());
  const onPagehide = () => h.background(true);
  const onPageshow = () => h.foreground();
  doc.addEventListener('visibilitychange', onVisibility);
  g.addEventListener?.('pagehide', onPagehide);
  g.addEventListener?.('pageshow', onPageshow);
  return () => {
    doc.removeEventListener('visibilitychange', onVisibility);
    g.removeEventListener?.('pagehide', onPagehide);
    g.removeEventListener?.('pageshow', onPageshow);
  };
}

/**
 * Device fields this runtime can tell without asking the app: locale and time zone everywhere;
 * in a browser the OS (the contract has no "browser" platform: `navigator.userAgentData.platform`,
 * else the user agent, mapped to ios/android/macos/windows/linux), its version, the screen in CSS
 * pixels and the connection type; in Node/Electron the OS from `process.platform`.
 */
export function detectDevice(): Device {
  try {
    return detect();
  } catch {
    return {}; // a hostile or half-built navigator/screen: the app's own fields still go
  }
}

function detect(): Device {
  const d: Device = {};
  try {
    const o = Intl.DateTimeFormat().resolvedOptions();
    if (o.locale) d.locale = o.locale;
    if (o.timeZone) d.timezone = o.timeZone;
  } catch {
    // Hermes without Intl: the app can pass locale and timezone itself
  }
  const rt = runtime();
  if (rt === 'browser') {
    const nav = g.navigator ?? {};
    const ua = nav.userAgent ?? '';
    const fromUa =
      /iPhone|iPad|iPod/.test(ua) || (/Macintosh/.test(ua) && (nav.maxTouchPoints ?? 0) > 1)
        ? 'ios'
        : /Android/.test(ua)
          ? 'android'
          : /Windows/.test(ua)
            ? 'windows'
            : /Mac OS X|Macintosh/.test(ua)
              ? 'macos'
              : /CrOS|Linux|X11/.test(ua)
                ? 'linux'
                : undefined;
    const platform = platformOf(nav.userAgentData?.platform) ?? fromUa;
    if (platform) d.platform = platform;
    const v = /(?:Android|Windows NT|CPU (?:iPhone )?OS|Mac OS X) ([\d._]+)/.exec(ua)?.[1];
    if (v) d.osVersion = v.replace(/_/g, '.');
    if (g.screen?.width) d.screenWidth = g.screen.width;
    if (g.screen?.height) d.screenHeight = g.screen.height;
    const t = nav.connection?.type;
    if (t) d.networkType = t === 'wifi' || t === 'cellular' || t === 'none' ? t : 'unknown';
  } else if (rt === 'node') {
    const p = platformOf(g.process?.platform);
    if (p) d.platform = p;
    try {
      const v = g.process?.getSystemVersion?.(); // Electron
      if (v) d.osVersion = v;
    } catch {
      // not Electron
    }
  }
  return d;
}

/**
 * Device fields from React Native's `Platform` and `Dimensions` (pass them in: the SDK does not
 * import react-native). Sizes are rounded later: Android reports fractional logical pixels.
 */
export function reactNativeDevice(rn: {
  Platform: {
    OS: string;
    Version: string | number;
    constants?: { Model?: string; Brand?: string; Manufacturer?: string; osVersion?: string };
  };
  Dimensions?: { get(dim: 'window' | 'screen'): { width: number; height: number } };
}): Device {
  const d: Device = {};
  const p = platformOf(rn.Platform.OS);
  if (p) d.platform = p;
  d.osVersion = String(rn.Platform.constants?.osVersion ?? rn.Platform.Version);
  const c = rn.Platform.constants;
  if (c?.Model) d.model = c.Model;
  const brand = c?.Brand ?? c?.Manufacturer;
  if (brand) d.brand = brand;
  const s = rn.Dimensions?.get('window');
  if (s) {
    d.screenWidth = s.width;
    d.screenHeight = s.height;
  }
  return d;
}

/**
 * Who holds what this client saves (see `Batch.hold`). In a browser, the tab: an id kept in
 * `sessionStorage`, which lives as long as the tab and is shared by its page loads, so a tab's
 * next page load takes what its last page held while another tab leaves it alone. Elsewhere
 * one app owns its storage: 'app', so the next launch takes what the last one held.
 */
export function holdOwner(newId: () => string): string {
  if (runtime() !== 'browser') return 'app';
  try {
    type Store = { getItem(k: string): string | null; setItem(k: string, v: string): void };
    const ss = (globalThis as { sessionStorage?: Store }).sessionStorage;
    const found = ss?.getItem('flightrec.tab');
    if (found) return found;
    const id = newId();
    ss?.setItem('flightrec.tab', id);
    return id;
  } catch {
    return newId(); // storage refused: this page load only
  }
}
