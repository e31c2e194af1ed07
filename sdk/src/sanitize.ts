// Checking and coercing what the app hands the SDK, at track time, into values the service
// accepts. The service refuses a whole request (422) for one bad field, and JSON.stringify
// throws on a BigInt or a cycle, so every value is made safe here, once, before it is buffered.
import type { CrashReport, Device, NetworkRequest, Platform, SdkEvent } from './types.js';

/** The service's string limits (its ingestion schema), so a long value is cut, not refused. */
export const LIMITS = {
  short: 1024,
  long: 65_536,
  nullable: 8192,
  method: 32,
  url: 16_384,
  message: 8192,
  stackTrace: 262_144,
  /** Strings inside custom properties: long enough for any real value, short enough that one
   *  pasted blob does not push its event over the batch byte limit. */
  property: 65_536,
  /** The service refuses properties nested deeper than 32 levels. */
  depth: 24,
  maxTimestamp: 10_000_000_000_000,
  screen: 100_000,
  /** What one value may take when no batch limit is given (the largest `maxBatchBytes`). */
  itemBytes: 4 * 1024 * 1024,
} as const;

/** What is left of an item's bytes while it is made safe; JSON sizes are counted roughly. */
export interface Budget {
  left: number;
}

/** Thrown inside `jsonSafe` when a value cannot fit its budget: the item is dropped whole. */
export class TooLarge extends Error {
  constructor() {
    super('value over the batch byte limit');
  }
}

function spend(budget: Budget, bytes: number): void {
  budget.left -= bytes;
  if (budget.left < 0) throw new TooLarge();
}

/** Problems found while coercing one item: values dropped, with where they were. */
export type Issues = string[];

/** Cuts `s` to `max` UTF-16 units without splitting a surrogate pair. */
export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  const cut = s.charCodeAt(max - 1) >= 0xd800 && s.charCodeAt(max - 1) <= 0xdbff ? max - 1 : max;
  return s.slice(0, cut);
}

/** A string field: strings cut to `max`, numbers/booleans/BigInts spelled out, anything else undefined. */
export function str(v: unknown, max: number): string | undefined {
  if (typeof v === 'string') return truncate(v, max);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return truncate(String(v), max);
  return undefined;
}

/** A non-negative integer (rounded) within `max`, or undefined for NaN, ±Infinity and non-numbers. */
export function int(v: unknown, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) return undefined;
  return Math.min(max, Math.max(0, Math.round(n)));
}

export function finite(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function timestamp(v: unknown, now = Date.now()): number {
  const n = int(v, LIMITS.maxTimestamp);
  return n === undefined || n === 0 ? now : n;
}

/**
 * A JSON-safe copy of `value`: BigInt → decimal string, cycles → "[Circular]", too deep →
 * "[Truncated]", functions/symbols/undefined left out (as JSON.stringify does), NaN/±Infinity
 * left out (and noted in `issues`), objects with toJSON (Date) by their JSON form, Map/Set as
 * object/array, Errors as {name, message, stack}. Throwing getters are skipped. Throws only
 * `TooLarge`, as soon as the copy would be larger than `budget` (roughly, in JSON bytes): an
 * array's or a collection's length is checked before its items are walked, so `new Array(1e8)`
 * costs nothing.
 */
export function jsonSafe(
  value: unknown,
  issues: Issues = [],
  path = '',
  ancestors: object[] = [],
  budget: Budget = { left: LIMITS.itemBytes },
): unknown {
  switch (typeof value) {
    case 'string': {
      const s = truncate(value, LIMITS.property);
      spend(budget, s.length + 2);
      return s;
    }
    case 'boolean':
      spend(budget, 5);
      return value;
    case 'number':
      if (Number.isFinite(value)) {
        spend(budget, 8);
        return value;
      }
      issues.push(`${path || '/'}: ${value} is not a JSON number`);
      return undefined;
    case 'bigint':
      spend(budget, 8);
      return value.toString();
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null) return null;
  if (ancestors.includes(value)) return '[Circular]';
  if (ancestors.length >= LIMITS.depth) return '[Truncated]';
  // Each item of an array or collection takes at least 2 bytes ("0,"): what cannot fit is
  // refused before it is walked.
  const fits = (n: unknown) => {
    if (typeof n === 'number' && n * 2 > budget.left) throw new TooLarge();
  };
  let v: unknown = value;
  try {
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      v = (v as { toJSON(): unknown }).toJSON();
      if (typeof v !== 'object' || v === null) return jsonSafe(v, issues, path, ancestors, budget);
    } else if (v instanceof Error) {
      v = { name: readSafe(v, 'name'), message: readSafe(v, 'message'), stack: readSafe(v, 'stack') };
    } else if (typeof Map !== 'undefined' && v instanceof Map) {
      fits(v.size);
      v = Object.fromEntries(Array.from(v, ([k, x]) => [String(k), x]));
    } else if (typeof Set !== 'undefined' && v instanceof Set) {
      fits(v.size);
      v = Array.from(v);
    } else if (isTypedArray(v)) {
      fits(v.length);
      v = Array.from(v);
    }
  } catch (err) {
    if (err instanceof TooLarge) throw err;
    return undefined;
  }
  const inner = [...ancestors, value];
  if (Array.isArray(v)) {
    fits(v.length);
    spend(budget, 2);
    const out: unknown[] = [];
    for (let i = 0; i < v.length; i++) {
      let item: unknown;
      try {
        item = jsonSafe(v[i], issues, `${path}/${i}`, inner, budget);
      } catch (err) {
        if (err instanceof TooLarge) throw err;
        item = undefined;
      }
      spend(budget, item === undefined ? 5 : 1);
      out.push(item === undefined ? null : item); // as JSON.stringify does: positions are kept
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  let keys: string[];
  try {
    keys = Object.keys(v as object);
  } catch {
    return {};
  }
  fits(keys.length * 2);
  spend(budget, 2);
  for (const k of keys) {
    let item: unknown;
    try {
      item = jsonSafe((v as Record<string, unknown>)[k], issues, `${path}/${k}`, inner, budget);
    } catch (err) {
      if (err instanceof TooLarge) throw err;
      issues.push(`${path}/${k}: could not be read`);
      continue;
    }
    if (item !== undefined) {
      spend(budget, k.length + 4);
      out[k] = item;
    }
  }
  return out;
}

/** Uint8Array, Float64Array, BigInt64Array, … (not a DataView, which has no items). */
function isTypedArray(v: unknown): v is ArrayLike<number | bigint> {
  return ArrayBuffer.isView(v) && !(v instanceof DataView);
}

/** A property of `o`, or undefined when reading it throws (a hostile getter). */
export function readSafe(o: unknown, key: string): unknown {
  try {
    return (o as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** A shallow copy of the own enumerable properties of `o` that can be read; never throws. */
export function readable(o: unknown, issues?: Issues, what = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof o !== 'object' || o === null) return out;
  let keys: string[] = [];
  try {
    keys = Object.keys(o);
  } catch {
    issues?.push(`${what}: its properties could not be listed`);
  }
  for (const k of keys) {
    try {
      out[k] = (o as Record<string, unknown>)[k];
    } catch {
      issues?.push(`${what}/${k}: could not be read`);
    }
  }
  return out;
}

/** `readable` of a typed object: the same fields, those that could not be read left out. */
export function readableAs<T extends object>(o: T, issues?: Issues, what = ''): Partial<T> {
  return readable(o, issues, what) as Partial<T>;
}

/**
 * Custom-event properties: always a plain object, whatever the app passed; undefined (the event
 * is dropped, reported) when they cannot fit `maxBytes`.
 */
export function properties(
  v: unknown,
  issues: Issues,
  maxBytes: number = LIMITS.itemBytes,
): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return {};
  let safe: unknown;
  try {
    safe = jsonSafe(v, issues, '/properties', [], { left: maxBytes });
  } catch (err) {
    if (!(err instanceof TooLarge)) throw err;
    issues.push(`/properties: over the ${maxBytes}-byte batch limit`);
    return undefined;
  }
  if (typeof safe === 'object' && safe !== null && !Array.isArray(safe)) return safe as Record<string, unknown>;
  return safe === undefined ? {} : { value: safe };
}

const PLATFORMS: Record<string, Platform> = {
  ios: 'ios',
  ipados: 'ios',
  iphoneos: 'ios',
  android: 'android',
  macos: 'macos',
  mac: 'macos',
  darwin: 'macos',
  osx: 'macos',
  'mac os': 'macos',
  'mac os x': 'macos',
  linux: 'linux',
  'chrome os': 'linux',
  'chromium os': 'linux',
  chromeos: 'linux',
  cros: 'linux',
  freebsd: 'linux',
  openbsd: 'linux',
  windows: 'windows',
  win32: 'windows',
  win: 'windows',
};

/** The contract's platform for an OS name as runtimes spell it ('darwin', 'macOS', 'win32', 'Chrome OS'…). */
export function platformOf(v: unknown): Platform | undefined {
  return typeof v === 'string' ? PLATFORMS[v.trim().toLowerCase()] : undefined;
}

const NETWORK_TYPES = new Set(['wifi', 'cellular', 'none', 'unknown']);
const DEVICE_STRINGS = [
  'osVersion',
  'model',
  'brand',
  'appVersion',
  'appBuildNumber',
  'sdkVersion',
  'locale',
  'timezone',
] as const;

/** A device the service accepts: a platform outside the enum left out, screen sizes rounded. */
export function device(d: unknown, issues: Issues): Device {
  const src = readable(d, issues, '/device');
  const out: Device = {};
  if (src.platform !== undefined) {
    const p = platformOf(src.platform);
    if (p) out.platform = p;
    else issues.push(`/device/platform: ${String(src.platform)} is not one of ios, android, macos, linux, windows`);
  }
  for (const k of DEVICE_STRINGS) {
    const s = str(src[k], LIMITS.short);
    if (s !== undefined) out[k] = s;
    else if (src[k] !== undefined) issues.push(`/device/${k}: not a string`);
  }
  for (const k of ['screenWidth', 'screenHeight'] as const) {
    const n = int(src[k], LIMITS.screen);
    if (n !== undefined) out[k] = n;
    else if (src[k] !== undefined) issues.push(`/device/${k}: ${String(src[k])} is not a number`);
  }
  if (src.networkType !== undefined) {
    const t = String(src.networkType).toLowerCase();
    out.networkType = (NETWORK_TYPES.has(t) ? t : 'unknown') as Device['networkType'];
  }
  return out;
}

type Fields<E> = E extends SdkEvent ? Omit<E, 'sessionId' | 'timestamp' | 'sequenceNumber'> : never;
export type EventFields = Fields<SdkEvent>;

/**
 * The type-specific fields of an event, coerced; undefined when a required one is missing or is
 * not a finite number (the event is then dropped alone and reported).
 */
export function eventFields(
  e: Record<string, unknown>,
  scrub: (url: string) => string,
  issues: Issues,
  maxBytes: number = LIMITS.itemBytes,
): EventFields | undefined {
  switch (e.type) {
    case 'navigate': {
      const to = str(e.to, LIMITS.long);
      if (to === undefined) return void issues.push('/to: missing');
      const from = e.from === null || e.from === undefined ? null : (str(e.from, LIMITS.nullable) ?? null);
      return {
        type: 'navigate',
        from: from === null ? null : truncate(scrub(from), LIMITS.nullable),
        to: truncate(scrub(to), LIMITS.long),
      };
    }
    case 'tap': {
      const x = finite(e.x);
      const y = finite(e.y);
      if (x === undefined || y === undefined)
        return void issues.push(`/x,/y: (${String(e.x)}, ${String(e.y)}) is not a finite position`);
      const target = str(e.target, LIMITS.long);
      return target === undefined ? { type: 'tap', x, y } : { type: 'tap', x, y, target };
    }
    case 'custom': {
      const name = str(e.name, LIMITS.short);
      if (name === undefined) return void issues.push('/name: missing');
      const props = properties(e.properties, issues, maxBytes);
      return props && { type: 'custom', name, properties: props };
    }
    case 'network': {
      const call = networkCall(e, scrub, issues);
      return call && { type: 'network', ...call, error: call.error ?? null };
    }
    default:
      return void issues.push(`/type: ${String(e.type)} is not an event type`);
  }
}

type Call = Pick<NetworkRequest, 'method' | 'url' | 'statusCode' | 'duration' | 'error'>;

function networkCall(r: Record<string, unknown>, scrub: (url: string) => string, issues: Issues): Call | undefined {
  const url = str(r.url, LIMITS.url);
  const rawDuration = typeof r.duration === 'bigint' ? Number(r.duration) : r.duration;
  const duration = int(rawDuration, 1e12);
  if (url === undefined) return void issues.push('/url: missing');
  if (duration === undefined) return void issues.push(`/duration: ${String(r.duration)} is not a finite number`);
  // A negative duration is a clock or a bug, not a 0 ms request: the item is dropped, reported.
  if ((rawDuration as number) < 0) return void issues.push(`/duration: ${String(r.duration)} is negative`);
  const out: Call = {
    method: (str(r.method, LIMITS.method) ?? 'GET').toUpperCase(),
    url: truncate(scrub(url), LIMITS.url),
    duration,
  };
  let error = r.error === null || r.error === undefined ? null : (str(r.error, LIMITS.nullable) ?? String(r.error));
  if (r.statusCode !== undefined && r.statusCode !== null) {
    const raw = typeof r.statusCode === 'bigint' ? Number(r.statusCode) : r.statusCode;
    const status = int(raw, Number.MAX_SAFE_INTEGER);
    if (status === undefined) issues.push(`/statusCode: ${String(r.statusCode)} is not a number: left out`);
    else if ((raw as number) < 0) {
      // -1 is how many HTTP clients say "no response": the contract's connection error, which
      // has no statusCode (and, so the session is flagged, an error).
      issues.push(`/statusCode: ${String(r.statusCode)} is not an HTTP status: left out, as for a connection error`);
      error ??= 'connection error';
    } else if (status > 999) issues.push(`/statusCode: ${String(r.statusCode)} is not an HTTP status: left out`);
    else out.statusCode = status;
  }
  out.error = error === null ? null : truncate(error, LIMITS.nullable);
  return out;
}

/** A network-request entry, coerced; undefined when url or duration is unusable. */
export function networkRequest(
  r: Record<string, unknown>,
  id: string,
  scrub: (url: string) => string,
  issues: Issues,
): NetworkRequest | undefined {
  const call = networkCall(r, scrub, issues);
  if (!call) return undefined;
  const out: NetworkRequest = { id, ...call, timestamp: timestamp(r.timestamp) };
  const reqSize = int(r.requestSize, 1e12);
  const resSize = int(r.responseSize, 1e12);
  if (reqSize !== undefined) out.requestSize = reqSize;
  if (resSize !== undefined) out.responseSize = resSize;
  return out;
}

export function crash(c: Record<string, unknown>): Omit<CrashReport, 'sessionId' | 'timestamp'> {
  return {
    message: str(c.message, LIMITS.message) || 'Error',
    stackTrace: str(c.stackTrace, LIMITS.stackTrace) || str(c.message, LIMITS.stackTrace) || 'Error',
    isFatal: c.isFatal === true,
    handled: c.handled !== false,
  };
}

/** UTF-8 length of a string, without TextEncoder (absent on older React Native engines). */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // the pair is 4 bytes for 2 units
      i++;
    } else n += 2;
  }
  return n;
}

/**
 * Query parameters whose values are replaced by default. A name matches when it equals an
 * entry, or (for entries of 5+ letters) contains it: `id_token`, `client_secret`, `user_email`.
 */
export const DEFAULT_SCRUBBED_PARAMS: readonly string[] = [
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'api_key',
  'apikey',
  'key',
  'password',
  'passwd',
  'pwd',
  'pass',
  'secret',
  'auth',
  'authorization',
  'session',
  'sessionid',
  'sid',
  'email',
  'mail',
  'phone',
  'code',
  'sig',
  'signature',
  'credential',
  'jwt',
  'otp',
  'ssn',
];

export const FILTERED = '[Filtered]';

/**
 * What `scrubQueryParams` may be: names added to the defaults; a function that is given the
 * defaults and returns the whole list (to remove or replace some); false: no scrubbing at all.
 */
export type ScrubParams = readonly string[] | ((defaults: readonly string[]) => readonly string[]) | false;

/** Addresses in paths and values (`/users/jane@example.com/orders`, `%40` included). */
const EMAIL = /[^\s/?#&=@:;,'"<>]{1,64}(?:@|%40)[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/gi;

/**
 * Returns a scrubber for recorded URLs and routes: the user info (`user:password@`, or a token
 * as user name) becomes `[Filtered]@`; email addresses in the path, query and fragment become
 * `[Filtered]`; the values of query (and fragment) parameters named like secrets become
 * `[Filtered]`. String surgery rather than `URL`, whose React Native polyfill cannot set search
 * params, and which would re-encode the rest.
 */
export function urlScrubber(names: ScrubParams | undefined): (url: string) => string {
  if (names === false) return (u) => u;
  let chosen: readonly string[];
  try {
    chosen =
      typeof names === 'function'
        ? names(DEFAULT_SCRUBBED_PARAMS)
        : [...DEFAULT_SCRUBBED_PARAMS, ...(Array.isArray(names) ? names : [])];
    if (!Array.isArray(chosen)) chosen = DEFAULT_SCRUBBED_PARAMS;
  } catch {
    chosen = DEFAULT_SCRUBBED_PARAMS; // a throwing option must not turn scrubbing off
  }
  const list = chosen.filter((n) => typeof n === 'string').map((n) => n.toLowerCase().replace(/-/g, '_'));
  const exact = new Set(list);
  const partial = list.filter((n) => n.length >= 5);
  const secret = (raw: string): boolean => {
    let name: string;
    try {
      name = decodeURIComponent(raw.replace(/\+/g, ' '));
    } catch {
      name = raw;
    }
    name = name.toLowerCase().replace(/-/g, '_').replace(/\[\]$/, '');
    return exact.has(name) || partial.some((p) => name.includes(p));
  };
  const params = (q: string) =>
    q
      .split('&')
      .map((pair) => {
        const eq = pair.indexOf('=');
        return eq > 0 && secret(pair.slice(0, eq)) ? `${pair.slice(0, eq)}=${FILTERED}` : pair;
      })
      .join('&');
  return (url) => {
    const authority = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(url);
    let head = '';
    let out = url;
    if (authority) {
      const [whole, scheme = '', host = ''] = authority;
      const at = host.lastIndexOf('@');
      head = scheme + (at >= 0 ? `${FILTERED}@${host.slice(at + 1)}` : host);
      out = url.slice(whole.length);
    }
    if (out.includes('@') || /%40/i.test(out)) out = out.replace(EMAIL, FILTERED);
    const hash = out.indexOf('#');
    let frag = '';
    if (hash >= 0) {
      frag = out.slice(hash + 1);
      out = out.slice(0, hash);
      // OAuth implicit flows put tokens in the fragment (#access_token=…).
      if (frag.includes('=')) frag = params(frag);
      frag = `#${frag}`;
    }
    const q = out.indexOf('?');
    if (q >= 0) out = out.slice(0, q + 1) + params(out.slice(q + 1));
    return head + out + frag;
  };
}
