import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from './errors.ts';
import { firstByte, mayHoldHugeNumber, nonFinitePaths, topLevelArrayExceeds } from '../lib/jsonScan.ts';
import { MAX_DETAILS } from '../domain/errors.ts';

/** Route config: the top-level array of a body and its most elements, checked before parsing. */
export interface BodyArrayLimit {
  bodyArray?: { key: string; max: number };
}

/**
 * Route config: `prototypeKeys: 'keep'` parses `__proto__`/`constructor` keys as plain own keys
 * (JSON.parse never sets a prototype) instead of refusing the body, for a route whose handler
 * drops them itself with a reason (/ingest/crash: a crash report must not be lost over a tag).
 */
export interface PrototypeKeys {
  prototypeKeys?: 'keep';
  /**
   * Top-level fields whose numbers may be non-finite (1e400): the handler bounds them itself
   * (a crash report's context is not refused over one number); elsewhere they are a 422.
   */
  freeFormFields?: readonly string[];
}

/** The paths that are not under one of the free-form fields. */
const outside = (paths: string[], fields: readonly string[] | undefined) =>
  fields ? paths.filter((p) => !fields.some((f) => p === `/${f}` || p.startsWith(`/${f}/`))) : paths;

declare module 'fastify' {
  interface FastifyContextConfig extends BodyArrayLimit, PrototypeKeys {}
}

// Below this a body parses in well under a millisecond: not worth a scan.
const SCAN_FROM_BYTES = 16 * 1024;
/**
 * Below this an array's length is checked once the body is parsed, before the schema (whose
 * per-element errors were the other cost): parsing 128 KB of `{},{},…` takes 5-12 ms, and the
 * pre-scan read every byte of every body, 6 % of the request thread's busy time (docs/bench.md).
 * Above it, a body that cannot be valid is still refused before JSON.parse.
 */
const ARRAY_SCAN_FROM_BYTES = 128 * 1024;
const OPEN_OBJ = 0x7b;

const tooManyItems = (limit: { key: string; max: number }) =>
  new HttpError(422, 'Validation failed', [
    {
      path: `/${limit.key}`,
      message: `must NOT have more than ${limit.max} items`,
      keyword: 'maxItems',
      params: { limit: limit.max },
    },
  ]);

/** Whether a parsed body's array `limit.key` has more than `limit.max` elements. */
const exceeds = (value: unknown, limit: { key: string; max: number }) => {
  const list = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[limit.key] : undefined;
  return Array.isArray(list) && list.length > limit.max;
};

const REPLACEMENT = '\uFFFD';
// NUL, or a UTF-16 surrogate without its partner (the `u` flag makes a valid pair one code point).
const BAD = /[\u0000\ud800-\udfff]/u;
const BAD_ALL = /[\u0000\ud800-\udfff]/gu;

const clean = (s: string) => (BAD.test(s) ? s.replace(BAD_ALL, REPLACEMENT) : s);

/**
 * Replaces, in every string and object key of a parsed body, the characters the stores refuse:
 * NUL (Postgres text cannot hold it) and lone surrogates (`"\ud800"` is valid JSON, but
 * ClickHouse refuses the insert, which would fail every request sharing that group-commit
 * batch). They become U+FFFD rather than a 4xx, because an SDK drops a refused batch and a crash
 * report should not be lost over one bad character. Iterative, so any nesting depth is safe.
 */
export function sanitizeStrings(root: unknown): unknown {
  if (typeof root === 'string') return clean(root);
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x = v[i];
        if (typeof x === 'string') v[i] = clean(x);
        else if (x !== null && typeof x === 'object') stack.push(x);
      }
      continue;
    }
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      let x = o[k];
      if (typeof x === 'string') x = o[k] = clean(x);
      else if (x !== null && typeof x === 'object') stack.push(x);
      const ck = clean(k);
      if (ck !== k) {
        delete o[k];
        o[ck] = x;
      }
    }
  }
  return root;
}

// In JSON text, NUL or a lone surrogate can only arrive as a \u escape: a raw control character
// is invalid JSON and invalid UTF-8 decodes to U+FFFD. A body with no such escape (nearly all)
// is returned as parsed, without walking it. Most bodies hold no backslash at all, which a byte
// search answers 30 times faster than the expression (0.17 against 5.5 µs on an 18 KB body).
const SUSPECT_ESCAPE = /\\u(?:0000|d[89a-f])/i;
const BACKSLASH = 0x5c;

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The body's bytes as received (after gzip), when they are exactly what was parsed: the
     * ingest path hands them to ClickHouse as they are instead of serialising the parsed body
     * again. Unset when sanitising changed the parsed body.
     */
    rawBody?: Buffer;
  }
}

/** Fastify's own JSON parser (same prototype-poisoning checks), sanitising only suspect bodies. */
export function registerJsonParser(app: FastifyInstance): void {
  const refusing = app.getDefaultJsonParser('error', 'error');
  const keeping = app.getDefaultJsonParser('ignore', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer' },
    (req: FastifyRequest, body: string | Buffer, done) => {
      const bytes = body as Buffer;
      const limit = req.routeOptions.config?.bodyArray;
      // Every body is an object, and an ingest array has a most elements: a large body that
      // cannot be valid is refused before JSON.parse spends the event loop on it.
      if (bytes.length >= SCAN_FROM_BYTES) {
        if (firstByte(bytes) !== OPEN_OBJ)
          return done(
            new HttpError(422, 'Validation failed', [
              { path: '/', message: 'must be object', keyword: 'type', params: { type: 'object' } },
            ]),
            undefined,
          );
        if (limit && bytes.length >= ARRAY_SCAN_FROM_BYTES && topLevelArrayExceeds(bytes, limit.key, limit.max))
          return done(tooManyItems(limit), undefined);
      }
      const text = bytes.toString('utf8');
      const parse = req.routeOptions.config?.prototypeKeys === 'keep' ? keeping : refusing;
      parse(req, text, (err, value) => {
        if (err) return done(err, undefined);
        if (limit && exceeds(value, limit)) return done(tooManyItems(limit), undefined);
        // 1e400 parses to Infinity, which no store keeps (it became null): refused, pointing at it.
        if (mayHoldHugeNumber(text)) {
          const paths = outside(nonFinitePaths(value, MAX_DETAILS), req.routeOptions.config?.freeFormFields);

          if (paths.length)
            return done(
              new HttpError(
                422,
                'Validation failed',
                paths.map((path) => ({ path, message: 'must be a finite number' })),
              ),
              undefined,
            );
        }
        if (bytes.indexOf(BACKSLASH) >= 0 && SUSPECT_ESCAPE.test(text)) return done(null, sanitizeStrings(value));
        // Bytes that are not UTF-8 were decoded to U+FFFD in the parsed body; the raw bytes would
        // carry them on into the stores and every export format. One rule: the parsed body is kept.
        if (!isUtf8(bytes)) return done(null, value);
        req.rawBody = bytes;
        done(null, value);
      });
    },
  );
}
