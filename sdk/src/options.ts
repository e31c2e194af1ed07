// The client's options and what it reports: types only.
import type { PersistentQueue } from './persistence.js';
import type { AppStateLike } from './runtime.js';
import type { ScrubParams } from './sanitize.js';
import type { Level } from './scope.js';
import type { FetchLike, RetryInfo } from './transport.js';
import type { Device, FlightrecError, Outgoing } from './types.js';

export interface FlightrecOptions {
  /** The project's API key (`frk_…`; an ingest-only key is the one to ship in an app). */
  apiKey: string;
  /** Base URL of the flightrec service. */
  endpoint: string;
  /** Sent with every session start, over what the runtime tells (`detectDevice`); `sdkVersion` is filled in. */
  device?: Device;
  /** Fill in locale, time zone and, in browsers and Node, platform, OS version and screen. Default true. */
  detectDevice?: boolean;
  /** The fetch the SDK sends with (default: the platform's). */
  fetch?: FetchLike;
  /**
   * Keeps unsent batches and the open session's buffer across restarts. Default: in memory; in
   * a browser, what a page could not send when it was left is handed to the next page load
   * through `localStorage` (`pageHandoffPersistence`).
   */
  persistence?: PersistentQueue;
  /** How often a changed buffer is saved: what a hard kill can lose at most. Default 1000. */
  persistIntervalMs?: number;
  /** Told about rejected, dropped, invalid and undeliverable data; never thrown at the app. */
  onError?: (e: FlightrecError) => void;
  onRetry?: (info: RetryInfo) => void;
  /**
   * Sees every event, network request and crash before it is buffered; return it (changed or
   * not) to keep it, null to drop it. A hook that throws drops the item. Identity fields
   * (sessionId, sequenceNumber, id) cannot be changed.
   */
  beforeSend?: (item: Outgoing) => Outgoing | null | undefined;
  /** Share of sessions recorded, 0..1, decided at session start. Default 1. */
  sampleRate?: number;
  /**
   * Query/fragment parameters whose values are replaced by `[Filtered]` in recorded URLs and
   * routes: names given here are added to `DEFAULT_SCRUBBED_PARAMS`; a function gets the
   * defaults and returns the whole list (`(d) => d.filter((n) => n !== 'code')`); false turns
   * all URL scrubbing off (user info and email addresses included).
   */
  scrubQueryParams?: ScrubParams;
  /** Report uncaught errors as crashes (see `installCrashHandlers`). Default true. */
  captureCrashes?: boolean;
  /** How long a fatal crash may take to send before the platform's own handling goes on. Default 2000. */
  crashFlushTimeoutMs?: number;
  /** Start a session at once and whenever tracking finds none (after an idle or background end). Default false. */
  autoSession?: boolean;
  /** With `autoSession`: a session with no activity for this long is ended. Default 30 min; 0 disables. */
  idleTimeoutMs?: number;
  /** With `autoSession`: coming back after this long in the background starts a new session. Default 30 s. */
  backgroundTimeoutMs?: number;
  /**
   * Browser: send on `visibilitychange` (hidden) and `pagehide` with keepalive; `pagehide` also
   * ends the session, and what does not fit the browser's 64 KiB keepalive budget is kept for
   * the next page load. Default true.
   */
  lifecycle?: boolean;
  /**
   * Node / Electron main: on `beforeExit`, SIGTERM and SIGINT, end the session and make one last
   * attempt to send what is queued (a retry wait under way is cut short, none is started), for
   * at most `exitFlushTimeoutMs`, then let the process end as it would have. Retry waits do not
   * keep the process alive: a script that ends while the service is unreachable exits after the
   * last attempt instead of waiting out the retry cycle. Default true.
   */
  flushOnExit?: boolean;
  /** The most the last attempt on exit may take, in all. Default 2000. */
  exitFlushTimeoutMs?: number;
  /** React Native: pass `AppState` to flush on background and end sessions as above. */
  appState?: AppStateLike;
  /** Gzip request bodies where the runtime can (CompressionStream or node:zlib). Default true. */
  compress?: boolean;
  /** Sent with every crash report and message (`production`, `staging`, …). */
  environment?: string;
  /**
   * False: start switched off until `setEnabled(true)` (consent): nothing is recorded, sent or
   * stored, and the queue a previous visit left is not even read. Default true.
   */
  enabled?: boolean;
  /** Default 5000 (the contract's). */
  flushIntervalMs?: number;
  /** Default 30000 (the contract's). */
  networkFlushIntervalMs?: number;
  /** At most 500 (the contract's limit). */
  maxEventsPerBatch?: number;
  /** At most 200 (the contract's limit). */
  maxRequestsPerBatch?: number;
  /** Bytes of JSON per request, default 1 MiB (the service refuses 5 MiB). */
  maxBatchBytes?: number;
  /** Bound of the queue of unsent batches, in events + requests; default 10000. */
  maxQueueItems?: number;
  /** Default [2000, 4000, 8000] (the contract's). */
  retryDelaysMs?: readonly number[];
  /** Per-attempt timeout, default 30000; 0 disables it. */
  timeoutMs?: number;
}

export interface CrashOptions {
  /** The app is going down. Default false. */
  isFatal?: boolean;
  /** Caught by the app's own error handling. Default true. */
  handled?: boolean;
  /** Default `fatal` for a fatal crash, else `error`. */
  level?: Level;
  /** Groups reports by these parts instead of the stack (`['checkout', 'timeout']`). */
  fingerprint?: string[];
}

/** Options of captureMessage: a message is never fatal and its level is its own argument. */
export type MessageOptions = Omit<CrashOptions, 'level' | 'isFatal'>;

export interface ClientStats {
  queuedBatches: number;
  queuedItems: number;
  /** Events + requests dropped because the queue was full (oldest first). */
  dropped: number;
  /** Events + requests in batches the service refused with a non-retryable status. */
  rejected: number;
  /** Events, requests and crashes left out at track time as invalid (or by a throwing beforeSend). */
  invalid: number;
  sentBatches: number;
}
