// Wire shapes of the ingestion contract (the service's interface), as the SDK sends them.

/** A report's severity and a breadcrumb's. */
export type Level = 'fatal' | 'error' | 'warning' | 'info';

export interface Breadcrumb {
  /** Epoch ms. */
  timestamp: number;
  /** What kind: `console`, `ui.click`, `navigation`, `fetch`, `xhr`, or the app's own. */
  category: string;
  message: string;
  level: Level;
  data?: Record<string, unknown>;
}

/** The fields a crash report gets from the scope (the service's optional crash fields). */
export interface ReportContext {
  environment?: string;
  userId?: string;
  tags?: Record<string, string>;
  context?: Record<string, unknown>;
  breadcrumbs?: Breadcrumb[];
  level?: Level;
  fingerprint?: string[];
}

export type Platform = 'ios' | 'android' | 'macos' | 'linux' | 'windows';
export type NetworkType = 'wifi' | 'cellular' | 'none' | 'unknown';

export interface Device {
  platform?: Platform;
  osVersion?: string;
  model?: string;
  brand?: string;
  appVersion?: string;
  appBuildNumber?: string;
  sdkVersion?: string;
  locale?: string;
  timezone?: string;
  screenWidth?: number;
  screenHeight?: number;
  networkType?: NetworkType;
}

interface Envelope {
  sessionId: string;
  timestamp: number;
  sequenceNumber: number;
}

export interface NavigateEvent extends Envelope {
  type: 'navigate';
  from: string | null;
  to: string;
}
export interface NetworkEvent extends Envelope {
  type: 'network';
  method: string;
  url: string;
  statusCode?: number;
  duration: number;
  error: string | null;
}
export interface CustomEvent extends Envelope {
  type: 'custom';
  name: string;
  properties: Record<string, unknown>;
}
export interface TapEvent extends Envelope {
  type: 'tap';
  x: number;
  y: number;
  target?: string;
}

export type SdkEvent = NavigateEvent | NetworkEvent | CustomEvent | TapEvent;

/** An entry of `requests` on /ingest/network. */
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

export interface CrashReport extends ReportContext {
  sessionId: string;
  message: string;
  stackTrace: string;
  isFatal: boolean;
  handled: boolean;
  timestamp: number;
}

export type BatchKind = 'session' | 'events' | 'network' | 'crash' | 'sessionEnd';

/**
 * One request to the service, sealed: the body is serialised once, when the batch is made, and
 * that same string is sent on every retry and after a restart, so the service's idempotency
 * (same payload → no duplicates) holds. Plain JSON, so a persistent queue can store it as is.
 */
export interface Batch {
  /** Local identifier of the batch (not sent). */
  id: string;
  kind: BatchKind;
  /** Path under the endpoint, e.g. `/ingest/events`. */
  path: string;
  sessionId: string;
  /** Events or network requests carried (0 for session start/end and crash batches). */
  items: number;
  body: string;
  createdAt: number;
  /**
   * Local only (never sent): saved by a client that is still alive (a hidden tab, a running
   * app), so that another page of the origin leaves it to that client until `until` (the
   * client renews it while it lives) instead of ending its session for it.
   */
  hold?: BatchHold;
}

export interface BatchHold {
  /** The tab (browser: per tab, kept across its page loads) or app that saved it. */
  owner: string;
  /** Epoch ms after which the owner is taken to be gone. */
  until: number;
}

/** What `beforeSend` sees and may change: one event, network request or crash about to be buffered. */
export type Outgoing =
  | { kind: 'event'; event: SdkEvent }
  | { kind: 'request'; request: NetworkRequest }
  | { kind: 'crash'; crash: CrashReport };

/** What the `onError` hook receives. The SDK never throws at the app. */
export type FlightrecError =
  /** A 4xx other than 429: the batch was dropped, as the contract says not to retry it. */
  | { kind: 'rejected'; status: number; message: string; batch: Batch }
  /** 429/5xx/network failure after all retries: the batch is kept and tried again at the next flush. */
  | { kind: 'retry-exhausted'; status?: number; message: string; batch: Batch }
  /** The bounded queue was full: the oldest batch was dropped. */
  | { kind: 'dropped'; message: string; batch: Batch }
  /** The persistent queue failed to load or save. */
  | { kind: 'persistence'; message: string; cause: unknown }
  /** A call that needs a session was made without one, or after shutdown. */
  | { kind: 'usage'; message: string }
  /**
   * A tracked value the service would refuse. `dropped`: the whole item (event, request, crash)
   * was left out, alone; otherwise only the values listed in `issues` were (NaN in properties, a
   * platform outside the enum). Values that can be kept are coerced silently (BigInt → string,
   * cycles → "[Circular]", fractional screen sizes rounded, over-long strings cut).
   */
  | { kind: 'invalid'; message: string; dropped: boolean; issues: string[] }
  /** A bug in the SDK, caught so that it does not reach the app. */
  | { kind: 'internal'; message: string; cause: unknown };
