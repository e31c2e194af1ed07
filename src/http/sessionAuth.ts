import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './errors.ts';
import { SESSION_COOKIE, SESSION_TTL_MS, csrfMatches, type AccountsService } from '../services/accounts.ts';
import type { User } from '../repos/accounts.ts';

declare module 'fastify' {
  interface FastifyRequest {
    user: User;
    sessionToken: string;
  }
}

export const CSRF_HEADER = 'x-csrf-token';
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function readCookie(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

/** Secure whenever the public address is https or this request came over https. */
function secure(req: FastifyRequest, publicUrl: string): boolean {
  return publicUrl.startsWith('https:') || req.protocol === 'https';
}

export function setSessionCookie(req: FastifyRequest, reply: FastifyReply, token: string, publicUrl: string): void {
  const attrs = [
    `${SESSION_COOKIE}=${token}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${SESSION_TTL_MS / 1000}`,
  ];
  if (secure(req, publicUrl)) attrs.push('Secure');
  reply.header('set-cookie', attrs.join('; '));
}

export function clearSessionCookie(req: FastifyRequest, reply: FastifyReply, publicUrl: string): void {
  const attrs = [`${SESSION_COOKIE}=`, 'Path=/', 'HttpOnly', 'SameSite=Lax', 'Max-Age=0'];
  if (secure(req, publicUrl)) attrs.push('Secure');
  reply.header('set-cookie', attrs.join('; '));
}

/**
 * First CSRF layer, for every state-changing cookie route, log-in and sign-up included (no
 * session token exists yet there): a browser names the page's origin in `Origin` and says
 * `Sec-Fetch-Site`; a request from another site is refused. Clients that send neither
 * (curl, scripts) are not browsers riding a cookie and pass.
 */
export function originCheck(publicUrl: string) {
  const publicOrigin = new URL(publicUrl).origin;
  return async (req: FastifyRequest) => {
    if (!UNSAFE.has(req.method)) return;
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none')
      throw new HttpError(403, 'Cross-site request refused', undefined, undefined, { code: 'cross_site' });
    const origin = req.headers.origin;
    if (origin === undefined) return;
    if (origin !== publicOrigin && origin !== `${req.protocol}://${req.host}`)
      throw new HttpError(403, 'Cross-origin request refused', undefined, undefined, { code: 'cross_site' });
  };
}

/** onRequest: the signed-in user from the session cookie, else 401. */
export function sessionAuth(accounts: AccountsService) {
  return async (req: FastifyRequest) => {
    const token = readCookie(req, SESSION_COOKIE);
    const user = token ? await accounts.userBySession(token) : null;
    if (!token || !user) throw new HttpError(401, 'Not signed in');
    req.user = user;
    req.sessionToken = token;
  };
}

/**
 * Second CSRF layer, on state-changing routes that act with a session: the `X-CSRF-Token`
 * header must carry the token derived from this session (given out by login, signup and me).
 * Another site can make the browser send the cookie, but cannot read or compute the token.
 */
export async function csrfToken(req: FastifyRequest): Promise<void> {
  if (!UNSAFE.has(req.method)) return;
  const presented = req.headers[CSRF_HEADER];
  if (!csrfMatches(req.sessionToken, typeof presented === 'string' ? presented : undefined)) {
    throw new HttpError(403, 'Missing or invalid CSRF token (send the X-CSRF-Token header)');
  }
}
