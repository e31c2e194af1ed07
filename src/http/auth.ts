import type { FastifyReply, FastifyRequest } from 'fastify';
import { timingSafeEqual, createHash } from 'node:crypto';
import { HttpError } from './errors.ts';
import type { KeyResolver } from '../services/keyResolver.ts';
import { KEY_PREFIX, type KeyScope } from '../domain/apiKey.ts';

declare module 'fastify' {
  interface FastifyRequest {
    projectId: string;
    keyId: string;
  }
}

export function bearerToken(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}

/**
 * onRequest hook: the project API key, 401 when missing, malformed, unknown or deactivated;
 * 403 when the key does not carry the route's scope (an ingest-only key on /export).
 */
export function apiKeyAuth(keys: KeyResolver, scope: KeyScope) {
  return async (req: FastifyRequest, _reply: FastifyReply) => {
    const token = bearerToken(req);
    if (!token) throw new HttpError(401, 'Missing API key: send Authorization: Bearer <API_KEY>');
    const record = await keys.resolve(token);
    if (!record) throw new HttpError(401, 'Invalid or deactivated API key');
    if (!record.scopes.includes(scope)) {
      throw new HttpError(403, `This API key may not ${scope}: its scopes are ${record.scopes.join(', ') || 'none'}`);
    }
    req.projectId = record.projectId;
    req.keyId = record.keyId;
    req.allowedOrigins = record.allowedOrigins;
  };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * onRequest hook of routes under /projects/:projectId that either the operator (ADMIN_TOKEN)
 * or a key of that same project with `scope` may call (CI uploading its build's artifacts).
 * `req.keyId` stays unset for the admin token.
 */
export function adminOrKeyAuth(adminToken: string, keys: KeyResolver, scope: KeyScope) {
  const expected = digest(adminToken);
  const byKey = apiKeyAuth(keys, scope);
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const token = bearerToken(req);
    if (token && !token.startsWith(KEY_PREFIX) && timingSafeEqual(digest(token), expected)) return;
    await byKey(req, reply);
    if (req.projectId !== (req.params as { projectId?: string }).projectId)
      throw new HttpError(403, 'This API key belongs to another project');
  };
}

/** onRequest hook: the operator's ADMIN_TOKEN, compared in constant time. */
export function adminAuth(adminToken: string) {
  const expected = digest(adminToken);
  return async (req: FastifyRequest, _reply: FastifyReply) => {
    const token = bearerToken(req);
    if (!token || !timingSafeEqual(digest(token), expected)) throw new HttpError(401, 'Missing or invalid admin token');
  };
}

/** Whether an `Authorization` header carries `Bearer <expected>`, compared in constant time. */
export function bearerMatches(header: string | undefined, expected: string): boolean {
  const token = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
  return token !== undefined && timingSafeEqual(digest(token), digest(expected));
}

/** onRequest hook of /metrics: with METRICS_TOKEN set, its bearer token; without, open (keep the port private). */
export function metricsAuth(token: string | undefined) {
  return async (req: FastifyRequest) => {
    if (token !== undefined && !bearerMatches(req.headers.authorization, token))
      throw new HttpError(401, 'Missing or invalid metrics token');
  };
}
