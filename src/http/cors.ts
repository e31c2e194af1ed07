import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './errors.ts';
import type { Routes } from './typeProvider.ts';
import { originOf } from '../domain/origins.ts';

// CORS for /ingest only: a browser app on another origin sends with a public ingest key, so
// its preflights are answered and its answers (errors included) readable. /export, /api and
// the dashboard never carry CORS headers: a key that reads data must not be usable from pages.

/** The ingest routes a browser may preflight (the paths of src/http/routes/ingest.ts). */
const INGEST_PATHS = ['/session', '/session/end', '/events', '/crash', '/network'];
const ALLOW_HEADERS = 'authorization, content-type, content-encoding';
/** Not safelisted response headers the SDK reads: its backoff follows them. */
const EXPOSE_HEADERS = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After';
/** Chromium caps a cached preflight at 2 h; one preflight per route and page, not per batch. */
const MAX_AGE_SECONDS = 7200;

declare module 'fastify' {
  interface FastifyRequest {
    /** The key's project's allowed browser origins; null: any (set by apiKeyAuth). */
    allowedOrigins: string[] | null;
  }
}

/**
 * Preflights of /ingest, registered with that prefix in a context of its own: answered before
 * any API key check or body reading (a preflight carries neither). A preflight does not say
 * which project it is for, so it is answered for any origin; a project's list of origins is
 * enforced on the request itself (`ingestOriginCheck`).
 */
export const ingestPreflight = (): Routes => async (app) => {
  for (const path of INGEST_PATHS) {
    app.options(path, { schema: { hide: true } }, async (req, reply) => {
      const origin = req.headers.origin;
      reply.header('vary', 'Origin, Access-Control-Request-Headers');
      if (typeof origin === 'string' && origin) {
        reply.header('access-control-allow-origin', origin);
        reply.header('access-control-allow-methods', 'POST');
        reply.header('access-control-allow-headers', ALLOW_HEADERS);
        reply.header('access-control-max-age', String(MAX_AGE_SECONDS));
      }
      return reply.code(204).send();
    });
  }
};

/** The request's Origin when the project's list (if any) allows it; undefined otherwise. */
function allowedOrigin(req: FastifyRequest): string | undefined {
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || !origin) return undefined;
  const list = req.allowedOrigins as string[] | null | undefined;
  if (!list) return origin;
  const o = originOf(origin);
  return o !== undefined && list.includes(o) ? origin : undefined;
}

/**
 * onRequest hook of /ingest, after the key check: a browser request from an origin outside the
 * project's list is refused (403) before its body is read, so nothing is stored. Requests with
 * no Origin (native apps, servers) are not concerned.
 */
export async function ingestOriginCheck(req: FastifyRequest): Promise<void> {
  if (typeof req.headers.origin === 'string' && req.headers.origin && allowedOrigin(req) === undefined) {
    throw new HttpError(403, "This origin may not send to this project: add it to the project's allowedOrigins");
  }
}

/** onSend hook of /ingest: every answer, errors included, readable by the page that sent it. */
export async function ingestCorsHeaders(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  // Added to what is there (Accept-Encoding from the compression of large answers).
  const vary = reply.getHeader('vary');
  if (!vary) reply.header('vary', 'Origin');
  else if (!/\borigin\b/i.test(String(vary))) reply.header('vary', `${String(vary)}, Origin`);
  const origin = allowedOrigin(req);
  if (origin !== undefined) {
    reply.header('access-control-allow-origin', origin);
    reply.header('access-control-expose-headers', EXPOSE_HEADERS);
  }
  return payload;
}
