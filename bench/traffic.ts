/**
 * SDK-shaped request bodies, built as strings from pre-rendered fragments so that the load
 * generator spends its CPU sending, not serialising. Every session id and request id is a
 * random v4 UUID (`Ids`) and sequence numbers only grow, so no two acknowledged rows can
 * collapse into one by accident.
 */
import { randomUUID } from 'node:crypto';

export const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00.000Z

export type Kind = 'session' | 'events100' | 'events500' | 'network200' | 'crash';
export const ROUTE: Record<Kind, string> = {
  session: '/ingest/session',
  events100: '/ingest/events',
  events500: '/ingest/events',
  network200: '/ingest/network',
  crash: '/ingest/crash',
};

export interface Body {
  kind: Kind;
  path: string;
  json: string;
  /** Rows this body adds to `events` and to `network_logs` when acknowledged. */
  events: number;
  networkRows: number;
}

/**
 * Random v4 UUIDs, as the SDK makes them: the text an SDK sends decides work on the server (one
 * random UUID in nine holds a run the non-finite number check once took for an exponent), and a
 * random prefix with a counter made that one generator in nine, every body or none.
 */
export class Ids {
  next(): string {
    return randomUUID();
  }
}

const DEVICE = JSON.stringify({
  platform: 'android',
  osVersion: '14',
  model: 'Pixel 8',
  brand: 'Google',
  appVersion: '2.3.1',
  appBuildNumber: '231',
  sdkVersion: '0.1.0',
  locale: 'en-US',
  timezone: 'America/New_York',
  screenWidth: 1080,
  screenHeight: 2400,
  networkType: 'wifi',
});

const STACKS = Array.from({ length: 5 }, (_, g) =>
  [
    `at checkout${g} (cart.js:${10 + g}:5)`,
    'at onPress (button.js:3:1)',
    'at dispatch (react.js:100:2)',
    'at run (loop.js:1:1)',
    'at main (index.js:1:1)',
    'at extra (more.js:9:9)',
  ].join('\n'),
);

/** The tail of each event after its envelope, by position in the 4-type rotation. */
function eventTail(i: number): { type: string; tail: string; network: boolean } {
  switch (i % 4) {
    case 0:
      return { type: 'navigate', tail: `,"from":"/screen/${i - 1}","to":"/screen/${i}"}`, network: false };
    case 1:
      // One failed request in 64 network events, so the session flag gets set now and then.
      return {
        type: 'network',
        tail:
          i % 256 === 1
            ? `,"method":"POST","url":"https://api.example.com/checkout","statusCode":500,"duration":240,"error":"Internal Server Error"}`
            : `,"method":"GET","url":"https://api.example.com/items/${i}","statusCode":200,"duration":120,"error":null}`,
        network: true,
      };
    case 2:
      return {
        type: 'custom',
        tail: `,"name":"add_to_cart","properties":{"sku":"SKU-${i % 97}","amount":${(i % 7) + 1},"currency":"USD"}}`,
        network: false,
      };
    default:
      return {
        type: 'tap',
        tail: `,"x":${(i * 37) % 1080}.5,"y":${(i * 53) % 2400},"target":"button#buy-${i % 13}"}`,
        network: false,
      };
  }
}
const TAILS = Array.from({ length: 1024 }, (_, i) => eventTail(i));

/** One simulated app install: a session at a time, sequence numbers counting up within it. */
export class Client {
  private sessionId = '';
  private seq = 0;
  private batches = 0;
  private clock = T0;

  constructor(
    private readonly ids: Ids,
    private readonly batchesPerSession: number,
  ) {}

  /** True when the next body must be a new session start (before any batch of it). */
  needsSession(): boolean {
    return this.sessionId === '' || this.batches >= this.batchesPerSession;
  }

  sessionStart(): Body {
    this.sessionId = this.ids.next();
    this.seq = 0;
    this.batches = 0;
    this.clock += 60_000;
    return {
      kind: 'session',
      path: ROUTE.session,
      events: 0,
      networkRows: 0,
      json: `{"sessionId":"${this.sessionId}","startedAt":${this.clock},"userId":"user-${this.sessionId.slice(-6)}","device":${DEVICE}}`,
    };
  }

  events(kind: 'events100' | 'events500'): Body {
    const n = kind === 'events100' ? 100 : 500;
    const head = `{"sessionId":"${this.sessionId}","type":"`;
    let json = `{"sessionId":"${this.sessionId}","events":[`;
    let network = 0;
    for (let k = 0; k < n; k++) {
      const seq = this.seq++;
      const t = TAILS[seq & 1023]!;
      if (t.network) network++;
      json += `${(k ? ',' : '') + head + t.type}","timestamp":${this.clock + seq},"sequenceNumber":${seq}${t.tail}`;
    }
    this.batches++;
    return { kind, path: ROUTE[kind], json: `${json}]}`, events: n, networkRows: network };
  }

  network(n = 200): Body {
    let json = `{"sessionId":"${this.sessionId}","requests":[`;
    for (let k = 0; k < n; k++) {
      json +=
        (k ? ',' : '') +
        `{"id":"${this.ids.next()}","method":"GET","url":"https://cdn.example.com/img/${k}.webp","statusCode":200,"duration":${30 + (k % 90)},"requestSize":0,"responseSize":${2048 + k},"error":null,"timestamp":${this.clock + k}}`;
    }
    this.batches++;
    return { kind: 'network200', path: ROUTE.network200, json: `${json}]}`, events: 0, networkRows: n };
  }

  crash(): Body {
    const stack = STACKS[this.seq % STACKS.length]!;
    return {
      kind: 'crash',
      path: ROUTE.crash,
      events: 0,
      networkRows: 0,
      json: JSON.stringify({
        sessionId: this.sessionId,
        message: 'TypeError: undefined is not a function',
        stackTrace: stack,
        isFatal: false,
        handled: true,
        timestamp: this.clock + this.seq++,
      }),
    };
  }
}

export type Mix = Record<Exclude<Kind, 'session'>, number>;

/** "events100=70,events500=10,network200=15,crash=0.5" → weights. */
export function parseMix(s: string): Mix {
  const mix: Mix = { events100: 0, events500: 0, network200: 0, crash: 0 };
  for (const part of s.split(',')) {
    const [k, v] = part.split('=').map((x) => x.trim());
    if (!k || !(k in mix) || !Number.isFinite(Number(v)) || Number(v) < 0)
      throw new Error(`bad BENCH_MIX part "${part}"`);
    mix[k as keyof Mix] = Number(v);
  }
  return mix;
}

/** Picks the next body kind at random, by weight. */
export function picker(mix: Mix): () => Exclude<Kind, 'session'> {
  const entries = (Object.entries(mix) as [Exclude<Kind, 'session'>, number][]).filter(([, w]) => w > 0);
  const total = entries.reduce((a, [, w]) => a + w, 0);
  if (total <= 0) throw new Error('BENCH_MIX has no positive weight');
  return () => {
    let r = Math.random() * total;
    for (const [k, w] of entries) {
      r -= w;
      if (r < 0) return k;
    }
    return entries[entries.length - 1]![0];
  };
}
